/**
 * A step of `npm run build`: the embedded cluster a first start copies (src/db/embedded-template.ts),
 * migrated and with the demo workspace imported, without keys; on the way, the committed catalog
 * is checked against the migrations. Run as built JavaScript.
 */
import { cp, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { catalogDifferences, readCatalog } from './db/catalog.ts';
import { catalog } from './db/catalog.generated.ts';
import { openDatabase } from './db/database.ts';
import { EMBEDDED_TEMPLATE_DIR } from './db/embedded-template.ts';
import { migrate } from './db/migrate.ts';
import { importDemo } from './demo/demo.ts';

/** Builds the template in `dataDir`; the reasons it cannot, when the committed catalog is not the migrations' own. */
async function build(dataDir: string): Promise<string[]> {
  const db = await openDatabase({ dataDir });
  try {
    await migrate(db);
    // The build's resources come from the committed catalog.
    const differences = catalogDifferences(await readCatalog(db), catalog);
    if (differences.length === 0) await importDemo(db);
    return differences;
  } finally {
    await db.close();
  }
}

const dataDir = await mkdtemp(join(tmpdir(), 'embedded-template-'));
try {
  const differences = await build(dataDir);
  if (differences.length > 0) {
    console.error(`src/db/catalog.generated.ts is stale:\n  - ${differences.map((line) => `${line} in the file, against the migrations`).join('\n  - ')}\nRun npm run generate, then npm run build.`);
    process.exitCode = 1;
  } else {
    await rm(EMBEDDED_TEMPLATE_DIR, { recursive: true, force: true });
    // Another file system (a tmpfs /tmp) cannot take a rename: copy instead.
    await rename(join(dataDir, 'pgdata'), EMBEDDED_TEMPLATE_DIR).catch(() => cp(join(dataDir, 'pgdata'), EMBEDDED_TEMPLATE_DIR, { recursive: true }));
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
