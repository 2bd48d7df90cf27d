import type { Database } from './database-types.ts';
import { readCodeDefinitions, replaceCode } from './database-code.ts';

/**
 * What the database's functions and triggers hold otherwise than the files of `src/db/code/`: a
 * line per function or trigger that differs from its file's definition (its body, its
 * signature's details, a trigger's events or role), that a file defines and the database lacks,
 * or that the database has and no file defines. Empty when they agree.
 *
 * The files are applied in a transaction that is rolled back, and what PostgreSQL then writes
 * back of each object is compared with what it wrote before, so that nothing is compared as
 * text the database would write otherwise. It takes the locks a migration takes: for tests and
 * maintenance, not for every start (a start applies the files when their checksum changed).
 */
export async function codeDifferences(db: Database): Promise<string[]> {
  return db.withConnection(async (connection) => {
    await connection.query('BEGIN');
    try {
      const actual = await readCodeDefinitions(connection);
      const source = new Map<string, string>();
      let current = new Map<string, string>();
      await replaceCode(connection, {
        keepDisabled: false,
        beforeFiles: async () => {
          current = await readCodeDefinitions(connection);
        },
        afterFile: async (file) => {
          const next = await readCodeDefinitions(connection);
          for (const [key, definition] of next) if (current.get(key) !== definition) source.set(key, file.name);
          current = next;
        },
      });
      // A function a DEFAULT or a CHECK calls outlives the drops: one no file wrote in this transaction is no file's.
      const unwritten = await connection.query<{ key: string }>(
        `SELECT 'function ' || p.oid::regprocedure::text AS key FROM pg_proc p
          WHERE p.pronamespace = current_schema()::regnamespace AND p.prokind = 'f' AND p.xmin::text::bigint <> txid_current() % 4294967296`,
      );
      for (const { key } of unwritten.rows) current.delete(key);
      const lines: string[] = [];
      const fileOf = (key: string) => `src/db/code/${source.get(key) ?? '*.sql'}`;
      for (const [key, definition] of current) {
        if (!actual.has(key)) lines.push(`${key}: missing, ${fileOf(key)} defines it`);
        else if (actual.get(key) !== definition) lines.push(`${key}: differs from its definition in ${fileOf(key)}`);
      }
      for (const key of actual.keys()) if (!current.has(key)) lines.push(`${key}: not expected, no file of src/db/code defines it`);
      return lines.sort();
    } finally {
      await connection.query('ROLLBACK');
    }
  });
}
