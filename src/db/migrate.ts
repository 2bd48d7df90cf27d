import { readdirSync } from 'node:fs';
import { packagePath } from '../package-root.ts';
import { openDatabase, type Database } from './database.ts';

const MIGRATIONS_DIR = packagePath('src', 'db', 'migrations');
const MIGRATIONS_TABLE = 'schema_migrations';

export interface MigrationResult {
  applied: string[];
}

/** The names of the migrations shipped with this build, in order. */
export const SHIPPED_MIGRATIONS: readonly string[] = readdirSync(MIGRATIONS_DIR)
  .filter((file) => file.endsWith('.sql'))
  .map((file) => file.replace(/\.sql$/, ''))
  .sort();

/**
 * Names of migrations shipped with this build that the database has not applied yet. Fails when
 * the database cannot be read or has never been migrated.
 */
export async function pendingMigrations(db: Database): Promise<string[]> {
  const applied = await db.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`);
  const names = new Set(applied.rows.map((row) => row.name));
  return SHIPPED_MIGRATIONS.filter((name) => !names.has(name));
}

/**
 * Whether the database already has every shipped migration, read with one cheap statement. When it
 * has, the migration tool is never loaded: it stays out of a serving process's memory.
 */
async function isSchemaCurrent(db: Database): Promise<boolean> {
  try {
    return (await pendingMigrations(db)).length === 0;
  } catch {
    // A fresh database has no migrations table yet.
    return false;
  }
}

/**
 * Applies every pending migration in one transaction (concurrent callers wait for each other).
 * Then gives the triggers that must fire in replica role their
 * role back, should a restore have made them ordinary ones (`restore_trigger_roles`, migration
 * 1763801000000): one statement when nothing needs it.
 */
export async function migrate(db: Database): Promise<MigrationResult> {
  const result = (await isSchemaCurrent(db)) ? { applied: [] } : await migrateDirect(db);
  await db.query('SELECT restore_trigger_roles()');
  return result;
}

/**
 * Migrations hold an advisory lock for their whole run: session state, which a pooler in
 * transaction mode would hand to other clients. They run on `DATABASE_DIRECT_URL` when it is set
 * apart from `DATABASE_URL`.
 */
async function migrateDirect(db: Database): Promise<MigrationResult> {
  if (db.directConnectionString === db.connectionString) return migrateOwn(db);
  const direct = await openDatabase({ url: db.directConnectionString, poolSize: 2, applicationName: 'course-booking-migrate' });
  try {
    return await migrateOwn(direct);
  } finally {
    await direct.close();
  }
}

/** A migration the database refused, named, with what to do about it; nothing of the run was applied. */
export class MigrationError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

const NOT_NULL_VIOLATION = '23502';

/** What a maintainer reads when `migration` is refused: the file, and for a NOT NULL column on rows without a value, the ways out. */
function migrationFailure(error: unknown, migration: string | null): Error {
  const failure = error as { message?: string; code?: string; table?: string; column?: string };
  if (!migration || typeof failure.code !== 'string') return error instanceof Error ? error : new Error(String(error));
  const file = `src/db/migrations/${migration}.sql`;
  const rolledBack = 'Nothing was applied: the pending migrations run in one transaction.';
  if (failure.code === NOT_NULL_VIOLATION && failure.table && failure.column) {
    return new MigrationError(
      `${file} cannot be applied to this database: the column ${failure.table}.${failure.column} is NOT NULL, and rows of ${failure.table} that exist have no value for it ` +
        `(PostgreSQL: ${failure.message}). Give it a DEFAULT in the migration (ALTER TABLE ${failure.table} ADD COLUMN ${failure.column} <type> NOT NULL DEFAULT <value>), ` +
        `or add it without NOT NULL, fill it in, then SET NOT NULL. ${rolledBack}`,
      { cause: error },
    );
  }
  return new MigrationError(`${file} failed: ${failure.message} (SQLSTATE ${failure.code}). ${rolledBack}`, { cause: error });
}

async function migrateOwn(db: Database): Promise<MigrationResult> {
  const { runner } = await import('node-pg-migrate');
  const client = await db.pool.connect();
  // node-pg-migrate announces each migration as it starts it: the one running when an error comes is the one refused.
  let running: string | null = null;
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
      logger: {
        debug: () => {},
        info: (message: string) => {
          running = /^### MIGRATION (\S+) \(UP\) ###$/.exec(message)?.[1] ?? running;
        },
        warn: () => {},
        error: () => {},
      },
    });
    return { applied: ran.map((migration) => migration.name) };
  } catch (error) {
    throw migrationFailure(error, running);
  } finally {
    client.release();
  }
}
