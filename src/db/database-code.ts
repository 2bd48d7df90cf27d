import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { packagePath } from '../package-root.ts';
import type { Queryable } from './database-types.ts';

/**
 * The database's code: every function and trigger of the service's schema, each defined once, as
 * it is now, in a file of `src/db/code/` grouped by concern. Migrations keep tables, columns,
 * indexes and data moves; `migrate` applies these files after the pending migrations, under the
 * migration lock, whenever their checksum differs from the one the database recorded (as Flyway's
 * repeatable migrations do).
 */
export const CODE_DIR = packagePath('src', 'db', 'code');

/** Where the checksum of the files last applied is kept: the migration tools' state, as `schema_migrations`. */
export const CODE_TABLE = 'schema_code';

export interface CodeFile {
  name: string;
  text: string;
}

let files: { list: CodeFile[]; checksum: string } | undefined;

/** The files in the order they are applied (their names'), and the SHA-256 of their names and texts. */
export function databaseCode(): { list: readonly CodeFile[]; checksum: string } {
  if (!files) {
    const list = readdirSync(CODE_DIR)
      .filter((name) => name.endsWith('.sql'))
      .sort()
      .map((name) => ({ name, text: readFileSync(`${CODE_DIR}/${name}`, 'utf8') }));
    const hash = createHash('sha256');
    for (const file of list) hash.update(`${file.name}\0${file.text}\0`);
    files = { list, checksum: hash.digest('hex') };
  }
  return files;
}

/** A file of `src/db/code/` the database refused: named with its line; nothing of the run was applied. */
export class DatabaseCodeError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'DatabaseCodeError';
  }
}

type Statements = Pick<Queryable, 'query'>;

const OWN_TRIGGERS = `
  SELECT tg.tgrelid::regclass::text AS table, tg.tgname AS name, tg.tgenabled = 'D' AS disabled
    FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid
   WHERE c.relnamespace = current_schema()::regnamespace AND NOT tg.tgisinternal
   ORDER BY 1, 2`;

/**
 * The schema's functions but those of an extension. `dependents`: whether an object other than a
 * function (a column's DEFAULT, a CHECK, an index) calls it, so that it cannot be dropped.
 */
const OWN_FUNCTIONS = `
  SELECT p.oid::regprocedure::text AS signature, pg_get_functiondef(p.oid) AS definition,
         EXISTS (SELECT 1 FROM pg_depend d WHERE d.refclassid = 'pg_proc'::regclass AND d.refobjid = p.oid
                    AND d.deptype = 'n' AND d.classid <> 'pg_proc'::regclass) AS dependents
    FROM pg_proc p
   WHERE p.pronamespace = current_schema()::regnamespace AND p.prokind = 'f'
     AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.classid = 'pg_proc'::regclass AND e.objid = p.oid AND e.deptype = 'e')
   ORDER BY 1`;

const TRIGGER_DEFINITIONS = `
  SELECT tg.tgrelid::regclass::text || '.' || tg.tgname AS name,
         pg_get_triggerdef(tg.oid) || CASE tg.tgenabled WHEN 'O' THEN '' WHEN 'R' THEN ', ENABLE REPLICA'
                                                        WHEN 'A' THEN ', ENABLE ALWAYS' ELSE ', DISABLED' END AS definition
    FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid
   WHERE c.relnamespace = current_schema()::regnamespace AND NOT tg.tgisinternal
   ORDER BY 1`;

/**
 * Every function and trigger of the schema as PostgreSQL writes it back (`pg_get_functiondef`,
 * `pg_get_triggerdef` and the trigger's role), keyed `function name(types)` and `trigger table.name`.
 */
export async function readCodeDefinitions(db: Statements): Promise<Map<string, string>> {
  const definitions = new Map<string, string>();
  for (const row of (await db.query<{ signature: string; definition: string }>(OWN_FUNCTIONS)).rows) definitions.set(`function ${row.signature}`, row.definition);
  for (const row of (await db.query<{ name: string; definition: string }>(TRIGGER_DEFINITIONS)).rows) definitions.set(`trigger ${row.name}`, row.definition);
  return definitions;
}

/** `text`'s line at a character `position` (1-based, as PostgreSQL reports it). */
const lineAt = (text: string, position: number) => text.slice(0, Math.max(0, position - 1)).split('\n').length;

/**
 * Replaces the schema's code with the files', in the caller's transaction: drops every trigger of
 * the schema's tables and every function nothing but functions calls, then runs each file. What
 * the files no longer define is gone with it, and a function may change its signature or result
 * freely. A function a column's DEFAULT or a CHECK calls stays and is replaced by its file's
 * `CREATE OR REPLACE` (a file that no longer defines it leaves it, which `codeDifferences` names).
 * `keepDisabled`: a trigger disabled now (a restore loading its table) is disabled again.
 * `beforeFiles` and `afterFile` are told before the first file and after each, for the attribution
 * of what each defined.
 */
export async function replaceCode(
  tx: Statements,
  options: { keepDisabled: boolean; beforeFiles?: () => Promise<void>; afterFile?: (file: CodeFile) => Promise<void> },
): Promise<void> {
  const triggers = (await tx.query<{ table: string; name: string; disabled: boolean }>(OWN_TRIGGERS)).rows;
  if (triggers.length > 0) await tx.query(triggers.map((trigger) => `DROP TRIGGER ${quoteIdent(trigger.name)} ON ${trigger.table};`).join('\n'));
  // Read after the triggers are gone: a trigger depends on its function, which would then count as used.
  const droppable = (await tx.query<{ signature: string; dependents: boolean }>(OWN_FUNCTIONS)).rows.filter((row) => !row.dependents);
  if (droppable.length > 0) await tx.query(`DROP FUNCTION ${droppable.map((row) => row.signature).join(', ')};`);
  await options.beforeFiles?.();
  for (const file of databaseCode().list) {
    try {
      await tx.query(file.text);
    } catch (error) {
      const failure = error as { message?: string; code?: string; position?: string };
      const line = failure.position ? `:${lineAt(file.text, Number(failure.position))}` : '';
      throw new DatabaseCodeError(`src/db/code/${file.name}${line} failed: ${failure.message} (SQLSTATE ${failure.code}). Nothing of it was applied.`, { cause: error });
    }
    await options.afterFile?.(file);
  }
  if (!options.keepDisabled) return;
  const again = triggers.filter((trigger) => trigger.disabled).map((trigger) => `ALTER TABLE ${trigger.table} DISABLE TRIGGER ${quoteIdent(trigger.name)};`);
  if (again.length > 0) await tx.query(again.join('\n'));
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * Applies the files when the database recorded another checksum, in one transaction on `client`,
 * which holds the migration lock; leaves the code of a database that has applied migrations this
 * build does not ship (`newer`: a later release's, whose code goes with its schema).
 */
export async function migrateCode(client: Statements, newer: boolean): Promise<'applied' | 'current' | 'newer'> {
  const { checksum } = databaseCode();
  await client.query('BEGIN');
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS ${CODE_TABLE} (
      id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1), checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const recorded = (await client.query<{ checksum: string }>(`SELECT checksum FROM ${CODE_TABLE}`)).rows[0]?.checksum;
    const outcome: 'applied' | 'current' | 'newer' = recorded === checksum ? 'current' : newer ? 'newer' : 'applied';
    if (outcome === 'applied') {
      await replaceCode(client, { keepDisabled: true });
      await client.query(
        `INSERT INTO ${CODE_TABLE} (id, checksum) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()`,
        [checksum],
      );
    }
    await client.query('COMMIT');
    return outcome;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
