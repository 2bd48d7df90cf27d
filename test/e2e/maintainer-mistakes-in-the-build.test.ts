import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED, MIGRATION, plantedMistakes } from '../support/planted-mistakes.ts';
import { ROOT } from '../support/service-commands.ts';

/**
 * The mistakes a maintainer adding a resource makes that npm run generate and npm run build meet,
 * planted one at a time on a scratch copy of the repository: each is refused with a message naming
 * its file, table or operation and the way out, and never a stack trace; the way out the message
 * gives is then taken and works. The build meets each in its step CHECK_STEP (run here from its
 * source, sparing a whole build per mistake); maintainer-mistakes-at-start.test.ts runs a whole
 * npm run build to that step's refusal, and meets the mistakes a start meets.
 */
describe('a maintainer mistake is explained where the build meets it', () => {
  const mistakes = plantedMistakes('maintainer-mistakes-');
  const { originals, write, read, npm, buildCheck, restore, refused } = mistakes;

  it('a migration renaming a column a fixed operation reads: generate and build name the operation, the contract field and both ways out, and write nothing; the rename the message gives keeps the public API', async () => {
    await write(MIGRATION, '-- Up Migration\nALTER TABLE sessions RENAME COLUMN location TO venue_location;\n\n-- Down Migration\nALTER TABLE sessions RENAME COLUMN venue_location TO location;\n');
    const explanation: Array<string | RegExp> = [
      `${MIGRATION} breaks the public API: the fixed operation courses (src/graphql/operations.ts) selects Session.location, the column sessions.location, which the migrations no longer create (sessions has the new column venue_location).`,
      'It fills Course.sessions[].location of the public contract (openapi/public-v1.yaml).',
      /keep the public name: serve the new column under it in src\/model\/overlay\.ts, sessions: \{.*rename: \{ venue_location: 'location' \} \}, then run npm run generate/,
      'or change the contract: openapi/public-v1.yaml first, then its reference text and CHANGELOG.md',
    ];
    const generated = refused(await npm('generate'));
    const expectExplained = (output: string) => {
      for (const part of explanation) expect(output).toMatch(part);
    };
    expectExplained(generated);
    expect(generated).toContain('npm run generate wrote nothing.');
    expect(generated).not.toMatch(/Cannot query field|GraphQL request|Document Validation/);
    for (const file of GENERATED) expect(await read(file), file).toBe(originals.get(file));

    // The build says the same, instead of sending the maintainer to npm run generate.
    const built = refused(await buildCheck());
    expectExplained(built);
    expect(built).not.toContain('Run npm run generate, then npm run build');

    // The way out it names: the entry, as the message writes it, in the overlay.
    const entry = /src\/model\/overlay\.ts, (sessions: \{.*\}), then run npm run generate/.exec(generated)![1]!;
    const overlay = originals.get('src/model/overlay.ts')!;
    await write('src/model/overlay.ts', overlay.replace(/^ {2}sessions: .*$/m, `  ${entry},`));
    expect((await npm('generate')).code).toBe(0);
    // The public schema is what it was: the column is served under its old name.
    expect(await read('schema/internal.graphql')).toBe(originals.get('schema/internal.graphql'));
    await restore();
  }, 300_000);

  it('a migration PostgreSQL refuses, and a demo fixture that is not JSON: the build names the file', async () => {
    await write(MIGRATION, '-- Up Migration\nALTER TABLE bookings ADD COLUM channel text;\n\n-- Down Migration\n');
    expect(refused(await buildCheck())).toContain(`${MIGRATION} failed: syntax error at or near "text" (SQLSTATE 42601). Nothing was applied: the pending migrations run in one transaction.`);
    await restore();

    await write('src/demo/demo-fixture.json', originals.get('src/demo/demo-fixture.json')!.slice(0, 200));
    expect(refused(await buildCheck())).toMatch(/^src\/demo\/demo-fixture\.json is not JSON: /m);
    await restore();
  }, 300_000);

  it('an overlay entry naming a column no migration creates stops the build with the overlay, the table and the column', async () => {
    await write('src/model/overlay.ts', originals.get('src/model/overlay.ts')!.replace(/^( {2}sessions: \{)/m, "$1 personalData: ['instructor_email'],"));
    expect(refused(await buildCheck())).toContain('src/model/overlay.ts: sessions: personalData names the column "instructor_email", which src/model/catalog.generated.ts does not list for sessions');
    await restore();
  }, 300_000);

  it('leaves the repository it copied untouched', async () => {
    for (const file of GENERATED) expect(await readFile(join(ROOT, file), 'utf8')).toBe(originals.get(file));
  });
});
