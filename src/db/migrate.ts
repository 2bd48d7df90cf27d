import { fileURLToPath } from 'node:url';
import { runner } from 'node-pg-migrate';
import type { Database } from './database.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));
export const MIGRATIONS_TABLE = 'schema_migrations';

export interface MigrationResult {
  applied: string[];
}

/** Applies every pending migration in one transaction; concurrent callers wait for each other. */
export async function migrate(db: Database): Promise<MigrationResult> {
  const client = await db.pool.connect();
  try {
    const ran = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      direction: 'up',
      migrationsTable: MIGRATIONS_TABLE,
      singleTransaction: true,
      checkOrder: true,
      advisoryLockMode: 'wait',
      log: () => {},
      logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
    return { applied: ran.map((migration) => migration.name) };
  } finally {
    client.release();
  }
}

/** Names of migrations shipped with this build that the database has not applied yet. */
export async function pendingMigrations(db: Database): Promise<string[]> {
  const client = await db.pool.connect();
  try {
    const ran = await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      direction: 'up',
      migrationsTable: MIGRATIONS_TABLE,
      dryRun: true,
      noLock: true,
      log: () => {},
      logger: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
    return ran.map((migration) => migration.name);
  } finally {
    client.release();
  }
}
