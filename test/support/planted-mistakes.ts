import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { BUILD_STEPS, ROOT } from './service-commands.ts';
import { STACK_FRAME, scratchCopy, shell } from './scratch-copy.ts';

export const GENERATED = ['src/model/catalog.generated.ts', 'schema/internal.graphql', 'src/graphql/operation-types.generated.ts', 'src/db/code/watched-tables.generated.sql'];
/** The planted migration: named after the newest one, as docs/adding-a-resource.md asks. */
const newest = Math.max(...(await readdir(join(ROOT, 'src/db/migrations'))).map((file) => Number(/^(\d+)_/.exec(file)?.[1] ?? 0)));
export const MIGRATION = `src/db/migrations/${newest + 1000}_mistake.sql`;

/**
 * The step of npm run build that meets a maintainer's mistakes in the migrations, the overlay and
 * the demo fixture (src/build-embedded-template.ts), as package.json runs it from the compiled
 * JavaScript; a test runs it from its source, which is what the compile before it would give, and
 * spares a whole build (the compile, the explorer, the reference) for each mistake planted.
 */
export const CHECK_STEP = 'node dist/src/build-embedded-template.js';
if (!BUILD_STEPS.includes(CHECK_STEP)) throw new Error(`npm run build no longer runs ${CHECK_STEP}: ${BUILD_STEPS.join(' && ')}`);

/**
 * A scratch copy of the repository for the tests of a describe block that plant a maintainer's
 * mistake in it, one at a time (test/e2e/maintainer-mistakes-*.test.ts): made before them, removed
 * after, and `restore` undoes a planted mistake and whatever npm run generate wrote because of it.
 */
export function plantedMistakes(prefix: string) {
  const originals = new Map<string, string>();
  const place = { scratch: '' };
  const write = (file: string, text: string) => writeFile(join(place.scratch, file), text);
  const read = (file: string) => readFile(join(place.scratch, file), 'utf8');

  beforeAll(async () => {
    place.scratch = await scratchCopy(prefix);
    for (const file of [...GENERATED, 'src/model/overlay.ts', 'src/demo/demo-fixture.json']) originals.set(file, await read(file));
  }, 120_000);
  afterAll(async () => {
    if (place.scratch) await rm(place.scratch, { recursive: true, force: true });
  });

  return {
    get scratch() {
      return place.scratch;
    },
    originals,
    write,
    read,
    npm: (...args: string[]) => shell(place.scratch, 'npm', ['run', '--silent', ...args]),
    /** npm run build's step that checks the migrations, the overlay and the demo fixture: CHECK_STEP, from its source. */
    buildCheck: () => shell(place.scratch, join(ROOT, 'node_modules/.bin/tsx'), [CHECK_STEP.replace(/^node dist\/(.*)\.js$/, '$1.ts')]),
    async restore() {
      await rm(join(place.scratch, MIGRATION), { force: true });
      for (const [file, text] of originals) await write(file, text);
    },
    /** A refusal as a maintainer must meet it: a non-zero exit, and no stack trace. */
    refused(result: { code: number; output: string }): string {
      expect(result.code, result.output).not.toBe(0);
      expect(result.output).not.toMatch(STACK_FRAME);
      return result.output;
    },
  };
}
