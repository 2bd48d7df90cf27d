import { readdirSync } from 'node:fs';
import { packagePath } from '../package-root.ts';
import type pg from 'pg';
import { CODE_TABLE, databaseCode, migrateCode } from './database-code.ts';
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

/** Names of migrations the database has applied that this build does not ship: it was migrated by a later release. */
function unknownMigrations(applied: readonly string[]): string[] {
  const shipped = new Set(SHIPPED_MIGRATIONS);
  return applied.filter((name) => !shipped.has(name));
}

/**
 * Whether the database already has every shipped migration and the code of `src/db/code/` (its
 * checksum, or a later release's code), read with one cheap statement. When it has, the migration
 * tool is never loaded: it stays out of a serving process's memory.
 */
async function isSchemaCurrent(db: Database): Promise<boolean> {
  try {
    const state = await db.query<{ migrations: string[]; code: string | null }>(
      `SELECT ARRAY(SELECT name FROM ${MIGRATIONS_TABLE}) AS migrations, (SELECT checksum FROM ${CODE_TABLE}) AS code`,
    );
    const { migrations, code } = state.rows[0]!;
    const applied = new Set(migrations);
    if (SHIPPED_MIGRATIONS.some((name) => !applied.has(name))) return false;
    return code === databaseCode().checksum || unknownMigrations(migrations).length > 0;
  } catch {
    // A fresh database has none of the tables yet, a database of an earlier release no code checksum.
    return false;
  }
}

/**
 * Applies every pending migration in one transaction (concurrent callers wait for each other), then
 * the database's code (`src/db/code/`, when its checksum changed) in another, both under the
 * migration lock. Then gives the triggers that must fire in replica role their role back, should a
 * restore have made them ordinary ones (`restore_trigger_roles`, src/db/code/trigger-roles.sql):
 * one statement when nothing needs it.
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
  if (db.directConnectionString === db.connectionString) return migrateUnderLock(db);
  const direct = await openDatabase({ url: db.directConnectionString, poolSize: 2, applicationName: 'course-booking-migrate' });
  try {
    return await migrateUnderLock(direct);
  } finally {
    await direct.close();
  }
}

/**
 * The pending migrations, then the database's code, on one connection that holds node-pg-migrate's
 * own advisory lock throughout: a concurrent migrate (of this release or an earlier one) waits for
 * both, and never sees migrations applied without the code that goes with them.
 */
async function migrateUnderLock(db: Database): Promise<MigrationResult> {
  const { runner, PG_MIGRATE_LOCK_ID } = await import('node-pg-migrate');
  const client = await db.pool.connect();
  // A connection whose unlock failed is closed, not pooled: closing it releases the lock.
  let broken: Error | undefined;
  try {
    await client.query(`SELECT pg_advisory_lock(${PG_MIGRATE_LOCK_ID})`);
    try {
      const result = await migrateOwn(runner, client);
      const applied = await client.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`);
      await migrateCode(client, unknownMigrations(applied.rows.map((row) => row.name)).length > 0);
      return result;
    } finally {
      await client.query(`SELECT pg_advisory_unlock(${PG_MIGRATE_LOCK_ID})`).catch((error: Error) => (broken = error));
    }
  } finally {
    client.release(broken);
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

async function migrateOwn(runner: typeof import('node-pg-migrate').runner, client: pg.PoolClient): Promise<MigrationResult> {
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
      // migrateUnderLock holds the lock.
      noLock: true,
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
  }
}
