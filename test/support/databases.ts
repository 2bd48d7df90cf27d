import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { emptyClusterDump } from '../../src/db/empty-cluster.ts';
import { migrate } from '../../src/db/migrate.ts';

import type { DatabaseTarget } from './variants.ts';

export type { DatabaseTarget };

let migratedDump: Promise<Blob> | null = null;

/** The migrated embedded database the run's global setup dumped (test/support/migrated-database.ts). */
function migratedEmbedded(): Promise<Blob> {
  migratedDump ??= readFile(inject('migratedEmbeddedDatabase')).then((bytes) => new Blob([bytes]));
  return migratedDump;
}

/**
 * A migrated database of the test's own: in memory for the embedded target, started from the
 * run's migrated dump; on PostgreSQL a fresh database created for this test file and dropped when
 * it is closed.
 */
export async function openTestDatabase(target: DatabaseTarget, namePrefix = 'test_'): Promise<Database> {
  const db = target === 'embedded' ? await openDatabase({ initialData: await migratedEmbedded() }) : await openEmptyTestDatabase('postgres', namePrefix);
  await migrate(db);
  return db;
}

/**
 * A database of the test's own that no migration has touched: in memory from the dump of an
 * empty cluster for the embedded target; on PostgreSQL a new database (its name starting with
 * `namePrefix`), dropped when it is closed.
 */
export async function openEmptyTestDatabase(target: DatabaseTarget, namePrefix = 'test_'): Promise<Database> {
  if (target === 'embedded') return openDatabase({ initialData: await emptyClusterDump() });
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('DATABASE_URL is not set');
  const name = `${namePrefix}${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString(), poolSize: 10, statementTimeoutMs: 30_000 });
  const close = db.close.bind(db);
  return Object.assign(db, {
    async close() {
      await close();
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  });
}

/** A database several server processes share, with the settings that point a process at it. */
export interface SharedDatabase {
  db: Database;
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * A database for server processes started by the test: a real PostgreSQL of the test's own, or an
 * embedded one opened by this process in a data directory of its own and shared through its socket.
 */
export async function openSharedDatabase(target: DatabaseTarget, poolSize = 10): Promise<SharedDatabase> {
  if (target === 'postgres') {
    const db = await openTestDatabase('postgres');
    return { db, env: { DATABASE_URL: db.connectionString }, close: () => db.close() };
  }
  const dir = await mkdtemp(join(tmpdir(), 'shared-db-'));
  const db = await openDatabase({ dataDir: dir, shareEmbedded: true, poolSize, initialData: await migratedEmbedded() });
  await migrate(db);
  return {
    db,
    env: { DATA_DIR: dir },
    async close() {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
