import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.ts';
import { emptyClusterDump } from '../../src/db/empty-cluster.ts';
import { migrate } from '../../src/db/migrate.ts';
import { variantsNotRun } from './variants.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PGlite data directory dump of a migrated, empty embedded database. */
    migratedEmbeddedDatabase: string;
  }
}

/**
 * Migrates one embedded database for the whole run and leaves its dump in a file: each test's
 * embedded database starts from it, instead of running PostgreSQL's initdb and every migration
 * again (about 5 s of CPU each).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  for (const note of variantsNotRun()) console.warn(`Not run in this run: ${note}; they are listed as skipped.`);
  const db = await openDatabase({ initialData: await emptyClusterDump() });
  let dump: Blob;
  try {
    await migrate(db);
    dump = await db.dumpData!();
  } finally {
    await db.close();
  }
  const dir = await mkdtemp(join(tmpdir(), 'migrated-'));
  const file = join(dir, 'pgdata.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('migratedEmbeddedDatabase', file);
  return () => rm(dir, { recursive: true, force: true });
}
