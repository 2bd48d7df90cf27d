import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.ts';
import { emptyClusterDump } from '../../src/db/empty-cluster.ts';
import { migrate } from '../../src/db/migrate.ts';
import { variantsNotRun } from './variants.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PGlite data directory dump of a migrated, empty embedded database. */
    migratedEmbeddedDatabase: string;
    /** The start of the names of this run's PostgreSQL databases that outlive their test files (test/support/shared-api.ts). */
    sharedDatabasePrefix: string;
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
  const prefix = `test_shared_${randomBytes(4).toString('hex')}_`;
  project.provide('sharedDatabasePrefix', prefix);
  return async () => {
    await rm(dir, { recursive: true, force: true });
    await dropSharedDatabases(prefix);
  };
}

/**
 * The workers' shared PostgreSQL databases end with the run, not with a test file: dropped here,
 * after every worker has ended, by the name this run gave them.
 */
async function dropSharedDatabases(prefix: string): Promise<void> {
  if (!process.env.DATABASE_URL) return;
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
