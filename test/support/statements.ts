import type { Database } from '../../src/db/database.ts';

/** The SQL statements sent through `db` while `work` runs. */
export async function captureStatements(db: Database, work: () => Promise<unknown>): Promise<string[]> {
  const statements: string[] = [];
  const stop = db.onQuery((text) => statements.push(text));
  try {
    await work();
  } finally {
    stop();
  }
  return statements;
}

/**
 * The statements the requests of `work` cost: those sent while it runs, without the periodic write
 * of keys' last-used times (`KEY_LAST_USED_FLUSH_MS`), which falls into a window now and then
 * whatever the requests are.
 */
export async function statementsOfRequests(db: Database, work: () => Promise<unknown>): Promise<string[]> {
  return (await captureStatements(db, work)).filter((text) => !text.startsWith('UPDATE api_keys k SET last_used_at'));
}
