import { fileURLToPath } from 'node:url';
import { Logger as WorkerLogger, runMigrations as runQueueMigrations } from 'graphile-worker';
import { runner } from 'node-pg-migrate';
import type { Database } from './database.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));
export const MIGRATIONS_TABLE = 'schema_migrations';

export interface MigrationResult {
  applied: string[];
}

/** graphile-worker's own log lines are dropped: the service logs what matters about deliveries. */
export const silentWorkerLogger = new WorkerLogger(() => () => {});

/**
 * Applies every pending migration in one transaction (concurrent callers wait for each other), then
 * installs or upgrades the job queue's own schema (`graphile_worker`), which the booking trigger of
 * the webhooks migration writes to.
 */
export async function migrate(db: Database): Promise<MigrationResult> {
  const result = await migrateOwn(db);
  await runQueueMigrations({ pgPool: db.pool, noPreparedStatements: db.kind === 'embedded', logger: silentWorkerLogger });
  return result;
}

async function migrateOwn(db: Database): Promise<MigrationResult> {
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
