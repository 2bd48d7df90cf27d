import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/service-commands.ts';
import { STACK_FRAME, scratchCopy, shell } from '../support/scratch-copy.ts';
import { openSharedDatabase } from '../support/databases.ts';
import { startServerProcess } from '../support/server-process.ts';
import { describeWhere, missingFor } from '../support/variants.ts';

const GENERATED = ['src/db/catalog.generated.ts', 'schema/internal.graphql', 'src/graphql/operation-types.generated.ts'];
/** The planted migration: named after the newest one, as docs/adding-a-resource.md asks. */
const newest = Math.max(...(await readdir(join(ROOT, 'src/db/migrations'))).map((file) => Number(/^(\d+)_/.exec(file)?.[1] ?? 0)));
const MIGRATION = `src/db/migrations/${newest + 1000}_mistake.sql`;

/**
 * The mistakes a maintainer adding a resource makes, planted one at a time on a scratch copy of the
 * repository: each is refused where it happens (npm run generate, npm run build, a start) with a
 * message naming its file, table or operation and the way out, and never a stack trace; the way
 * out the message gives is then taken and works.
 */
describe('a maintainer mistake is explained where it happens', () => {
  let scratch: string;
  const originals = new Map<string, string>();
  const npm = (...args: string[]) => shell(scratch, 'npm', ['run', '--silent', ...args]);
  const write = (file: string, text: string) => writeFile(join(scratch, file), text);
  const read = (file: string) => readFile(join(scratch, file), 'utf8');
  /** The scratch copy's sources as the repository has them: the planted mistake and what generate wrote are undone. */
  const restore = async () => {
    await rm(join(scratch, MIGRATION), { force: true });
    for (const [file, text] of originals) await write(file, text);
  };
  const refused = (result: { code: number; output: string }) => {
    expect(result.code, result.output).not.toBe(0);
    expect(result.output).not.toMatch(STACK_FRAME);
    return result.output;
  };

  beforeAll(async () => {
    scratch = await scratchCopy('maintainer-mistakes-');
    for (const file of [...GENERATED, 'src/db/overlay.ts', 'src/demo/demo-fixture.json']) originals.set(file, await read(file));
  }, 120_000);
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('a migration renaming a column a fixed operation reads: generate and build name the operation, the contract field and both ways out, and write nothing; the rename the message gives keeps the public API', async () => {
    await write(MIGRATION, '-- Up Migration\nALTER TABLE sessions RENAME COLUMN location TO venue_location;\n\n-- Down Migration\nALTER TABLE sessions RENAME COLUMN venue_location TO location;\n');
    const explanation: Array<string | RegExp> = [
      `${MIGRATION} breaks the public API: the fixed operation courses (src/graphql/operations.ts) selects Session.location, the column sessions.location, which the migrations no longer create (sessions has the new column venue_location).`,
      'It fills Course.sessions[].location of the public contract (openapi/public-v1.yaml).',
      /keep the public name: serve the new column under it in src\/db\/overlay\.ts, sessions: \{.*rename: \{ venue_location: 'location' \} \}, then run npm run generate/,
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
    const built = refused(await npm('build'));
    expectExplained(built);
    expect(built).not.toContain('Run npm run generate, then npm run build');

    // The way out it names: the entry, as the message writes it, in the overlay.
    const entry = /src\/db\/overlay\.ts, (sessions: \{.*\}), then run npm run generate/.exec(generated)![1]!;
    const overlay = originals.get('src/db/overlay.ts')!;
    await write('src/db/overlay.ts', overlay.replace(/^ {2}sessions: .*$/m, `  ${entry},`));
    expect((await npm('generate')).code).toBe(0);
    // The public schema is what it was: the column is served under its old name.
    expect(await read('schema/internal.graphql')).toBe(originals.get('schema/internal.graphql'));
    await restore();
  }, 300_000);

  it('a NOT NULL column without a default: the build names the demo fixture, the column and a DEFAULT; a database with rows refuses the migration with the same advice at start, and takes it with the DEFAULT', async () => {
    await write(MIGRATION, '-- Up Migration\nALTER TABLE bookings ADD COLUMN channel text NOT NULL;\n\n-- Down Migration\nALTER TABLE bookings DROP COLUMN channel;\n');
    expect((await npm('generate')).code).toBe(0);
    const built = refused(await npm('build'));
    expect(built).toContain('src/demo/demo-fixture.json does not fit the migrations');
    expect(built).toMatch(/bookings\[0\] \(ref "b1"\) and \d+ more: channel is missing: the column bookings\.channel is NOT NULL and has no default/);
    expect(built).toContain('Give it a DEFAULT in its migration (ALTER TABLE bookings ADD COLUMN channel text NOT NULL DEFAULT <value>)');
    expect(built).not.toContain('Invalid input');

    // A data directory that has bookings (the previous build's template, with the demo) refuses it at start.
    const dataDir = await mkdtemp(join(tmpdir(), 'maintainer-mistakes-data-'));
    try {
      const started = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, scratch).then(
        async (server) => `started: ${await server.stop()}`,
        (error: unknown) => String(error),
      );
      expect(started).toContain(`Start failed: ${MIGRATION} cannot be applied to this database: the column bookings.channel is NOT NULL, and rows of bookings that exist have no value for it`);
      expect(started).toContain('Give it a DEFAULT in the migration');
      expect(started).not.toMatch(STACK_FRAME);

      // The way out: the column with a default, which the same database then takes (a default is
      // no part of what a start compares with the build's catalog, so this build serves it).
      await write(MIGRATION, "-- Up Migration\nALTER TABLE bookings ADD COLUMN channel text NOT NULL DEFAULT 'web';\n\n-- Down Migration\nALTER TABLE bookings DROP COLUMN channel;\n");
      const server = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, scratch);
      expect(server.output()).toContain('Demo workspace ws_');
      expect(await server.stop()).toBe(0);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await restore();
    }
  }, 300_000);

  it('a migration PostgreSQL refuses, and a demo fixture that is not JSON: the build names the file', async () => {
    await write(MIGRATION, '-- Up Migration\nALTER TABLE bookings ADD COLUM channel text;\n\n-- Down Migration\n');
    expect(refused(await npm('build'))).toContain(`${MIGRATION} failed: syntax error at or near "text" (SQLSTATE 42601). Nothing was applied: the pending migrations run in one transaction.`);
    await restore();

    await write('src/demo/demo-fixture.json', originals.get('src/demo/demo-fixture.json')!.slice(0, 200));
    expect(refused(await npm('build'))).toMatch(/^src\/demo\/demo-fixture\.json is not JSON: /m);
    await restore();
  }, 300_000);

  const title = (text: string) => originals.get('src/demo/demo-fixture.json')!.replace('Two mornings of hands-on first aid', text);
  const fullKeyOf = (banner: string) => /Key with every scope:\s+(svc_api_\w+)/.exec(banner)![1]!;
  const coursesOf = async (banner: string, key = fullKeyOf(banner)) => fetch(`${/on (http:\/\/\S+)/.exec(banner)![1]!}/api/public/v1/courses`, { headers: { Authorization: `Bearer ${key}` } });
  const firstCourse = async (banner: string) => {
    const body = (await (await coursesOf(banner)).json()) as { data: Array<{ description: string }> };
    return body.data.map((course) => course.description).find((text) => text.includes('first aid'));
  };

  it('a demo fixture edited since the build is imported at the first start, which says so; edited again, the next start imports it again; one the migrations refuse stops the start, named', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'maintainer-mistakes-demo-'));
    const fixture = originals.get('src/demo/demo-fixture.json')!;
    try {
      await write('src/demo/demo-fixture.json', title('Two mornings of edited first aid'));
      const first = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, scratch);
      expect(first.output()).toContain('src/demo/demo-fixture.json changed since npm run build: imported it now instead of the build');
      expect(await firstCourse(first.output())).toMatch(/^Two mornings of edited first aid/);
      expect(await first.stop()).toBe(0);

      // Unchanged since: the same demo, no notice.
      const again = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, scratch);
      expect(again.output()).not.toContain('changed since');
      expect(/Demo workspace (\S+)/.exec(again.output())![1]).toBe(/Demo workspace (\S+)/.exec(first.output())![1]);
      expect(await again.stop()).toBe(0);

      await write('src/demo/demo-fixture.json', title('Two mornings of twice edited first aid'));
      const changed = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, scratch);
      expect(changed.output()).toMatch(/src\/demo\/demo-fixture\.json changed since this data directory's demo was imported: imported it again as workspace ws_\w+; the earlier demo workspace ws_\w+ stays, its demo keys revoked\./);
      expect(await firstCourse(changed.output())).toMatch(/^Two mornings of twice edited first aid/);
      expect(await changed.stop()).toBe(0);

      await write('src/demo/demo-fixture.json', fixture.replace('"role": "owner"', '"role": "chief"'));
      const broken = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, scratch).then(
        async (server) => `started: ${await server.stop()}`,
        (error: unknown) => String(error),
      );
      expect(broken).toContain('Start failed: src/demo/demo-fixture.json does not fit the migrations: the demo workspace is imported from it, and it is refused:');
      expect(broken).toContain('members[0] (ref "m-owner"): role "chief"');
      expect(broken).not.toMatch(STACK_FRAME);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await restore();
    }
  }, 300_000);

  describeWhere(missingFor('postgres'), 'with DEMO=true on a real PostgreSQL', () => {
    it('a demo fixture edited since the demo workspace was imported is imported again at the next start, which says so and revokes the earlier demo keys', async () => {
      const database = await openSharedDatabase('postgres');
      const env = { ...database.env, DEMO: 'true' };
      const workspaceOf = (banner: string) => /Demo workspace (\S+)/.exec(banner)![1];
      try {
        const first = await startServerProcess(env, scratch);
        expect(first.output()).not.toContain('changed since');
        expect(await first.stop()).toBe(0);

        // Unchanged since: the same workspace, no notice.
        const again = await startServerProcess(env, scratch);
        expect(again.output()).not.toContain('changed since');
        expect(workspaceOf(again.output())).toBe(workspaceOf(first.output()));
        const earlierKey = fullKeyOf(again.output());
        expect(await again.stop()).toBe(0);

        await write('src/demo/demo-fixture.json', title('Two mornings of edited first aid'));
        const changed = await startServerProcess(env, scratch);
        expect(changed.output()).toContain(
          `src/demo/demo-fixture.json changed since the demo workspace ${workspaceOf(first.output())} was imported: imported it again as workspace ${workspaceOf(changed.output())}; the earlier demo workspace stays, its demo keys revoked.`,
        );
        expect(workspaceOf(changed.output())).not.toBe(workspaceOf(first.output()));
        expect(await firstCourse(changed.output())).toMatch(/^Two mornings of edited first aid/);
        expect((await coursesOf(changed.output(), earlierKey)).status).toBe(401);
        expect(await changed.stop()).toBe(0);

        // The next start keeps the new workspace.
        const kept = await startServerProcess(env, scratch);
        expect(kept.output()).not.toContain('changed since');
        expect(workspaceOf(kept.output())).toBe(workspaceOf(changed.output()));
        expect(await kept.stop()).toBe(0);
      } finally {
        await database.close();
        await restore();
      }
    }, 300_000);
  });

  // Last: its failed build leaves the scratch copy's dist compiled from the planted overlay.
  it('an overlay entry naming a column no migration creates stops the build with the overlay, the table and the column', async () => {
    await write('src/db/overlay.ts', originals.get('src/db/overlay.ts')!.replace(/^( {2}sessions: \{)/m, "$1 personalData: ['instructor_email'],"));
    expect(refused(await npm('build'))).toContain('src/db/overlay.ts: sessions: personalData names the column "instructor_email", which src/db/catalog.generated.ts does not list for sessions');
    await restore();
  }, 300_000);

  it('leaves the repository it copied untouched', async () => {
    for (const file of GENERATED) expect(await readFile(join(ROOT, file), 'utf8')).toBe(originals.get(file));
  });
});
