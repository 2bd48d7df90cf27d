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

/** The statements of keys' activity (last use, request log, daily counts, expiry warnings), written off the request path. */
export const KEY_ACTIVITY_STATEMENT = /api_key_requests|api_key_usage|UPDATE api_keys k SET last_used_at|expiry_warned_at/;

/**
 * The statements the requests of `work` cost: those sent while it runs, without the periodic write
 * of keys' activity (`KEY_REQUEST_LOG_FLUSH_MS`), which falls into a window now and then whatever
 * the requests are.
 */
export async function statementsOfRequests(db: Database, work: () => Promise<unknown>): Promise<string[]> {
  return (await captureStatements(db, work)).filter((text) => !KEY_ACTIVITY_STATEMENT.test(text));
}
