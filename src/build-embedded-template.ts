/**
 * A step of `npm run build`: the embedded cluster a first start copies (src/db/embedded-template.ts),
 * migrated and with the demo workspace imported, without keys, and beside it the SHA-256 of the
 * demo fixture it holds; on the way, the committed catalog is checked against the migrations. Run
 * as built JavaScript. A maintainer's mistake met here (a migration the database refuses, a
 * catalog the migrations no longer give, a migration that breaks a fixed operation of the public
 * API, an overlay that disagrees with the catalog, a demo fixture the migrations refuse) ends the
 * step with a message naming it and the way out, never with a stack trace.
 */
import { cp, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogDifferences, readCatalog } from './model/catalog.ts';
import { catalog } from './model/catalog.generated.ts';
import { openDatabase } from './db/database.ts';
import { emptyClusterDump } from './db/empty-cluster.ts';
import { EMBEDDED_TEMPLATE_DIR, EMBEDDED_TEMPLATE_INFO, endTemplateLog, trimTemplateLog, type TemplateInfo } from './db/embedded-template.ts';
import { MigrationError, migrate } from './db/migrate.ts';
import { overlay } from './model/overlay.ts';
import { ModelError } from './model/resource-model.ts';
import { importDemo } from './demo/demo.ts';
import { readDemoFixture } from './demo/demo-fixture.ts';
import { brokenOperations } from './graphql/operation-problems.ts';
import { isInputError } from './input-error.ts';

/**
 * Builds the template in `dataDir`: the write-ahead log segment it leaves in use, or why it cannot,
 * when the committed catalog is not the migrations' own.
 */
async function build(dataDir: string, fixture: unknown): Promise<{ logSegment: string } | { failure: string }> {
  const db = await openDatabase({ dataDir, initialData: await emptyClusterDump() });
  try {
    await migrate(db);
    // The build's resources come from the committed catalog.
    const migrated = await readCatalog(db);
    const differences = catalogDifferences(migrated, catalog);
    if (differences.length > 0) {
      const added = migrated.migrations.filter((name) => !catalog.migrations.includes(name));
      const broken = brokenOperations(catalog, migrated, overlay, added);
      // npm run generate would refuse these too: say so here, not "run npm run generate".
      if (broken.length > 0) return { failure: `${broken.join('\n')}\nnpm run generate refuses the same, and writes nothing, until one of the two is done.` };
      return { failure: `src/model/catalog.generated.ts is stale:\n  - ${differences.map((line) => `${line} in the file, against the migrations`).join('\n  - ')}\nRun npm run generate, then npm run build.` };
    }
    await importDemo(db, fixture);
    return { logSegment: await endTemplateLog(db) };
  } finally {
    await db.close();
  }
}

/** What the step says of anything it cannot do: the message of a maintainer's mistake as it is; another failure without its stack. */
function failureText(error: unknown): string {
  if (error instanceof ModelError || error instanceof MigrationError || isInputError(error)) return error.message;
  return `The embedded database step of npm run build (src/build-embedded-template.ts) failed: ${error instanceof Error ? error.message : String(error)}`;
}

const dataDir = await mkdtemp(join(tmpdir(), 'embedded-template-'));
try {
  const demo = await readDemoFixture();
  const built = await build(dataDir, demo.fixture);
  if ('failure' in built) {
    console.error(built.failure);
    process.exitCode = 1;
  } else {
    await rm(EMBEDDED_TEMPLATE_DIR, { recursive: true, force: true });
    // Another file system (a tmpfs /tmp) cannot take a rename: copy instead.
    await rename(join(dataDir, 'pgdata'), EMBEDDED_TEMPLATE_DIR).catch(() => cp(join(dataDir, 'pgdata'), EMBEDDED_TEMPLATE_DIR, { recursive: true }));
    await trimTemplateLog(EMBEDDED_TEMPLATE_DIR, built.logSegment);
    const info: TemplateInfo = { demoFixtureSha256: demo.sha256 };
    await writeFile(EMBEDDED_TEMPLATE_INFO, `${JSON.stringify(info)}\n`);
  }
} catch (error) {
  console.error(failureText(error));
  process.exitCode = 1;
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
