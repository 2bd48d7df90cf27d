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
