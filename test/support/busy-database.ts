import type { Database } from '../../src/db/database.ts';

/** Rows the embedded engine counts for each statement it runs beside a request's: some 70 ms of its time. */
const EMBEDDED_ROWS = 100_000;

/**
 * Runs `work` while the database is busy with another client's work, so that the statements
 * `work` sends take database time that no estimate foresees. On PostgreSQL a transaction holds
 * the bookings table (`LOCK TABLE … ACCESS EXCLUSIVE`): a statement reading bookings waits for it
 * until it is cancelled. The embedded engine runs one statement at a time, in this process: beside
 * each statement that reads bookings or sessions, another client's long statement is run, which
 * the statement waits for.
 */
export async function whileBusy<T>(db: Database, work: () => Promise<T>): Promise<T> {
  if (db.kind === 'postgres') {
    return db.transaction(async (tx) => {
      await tx.query('LOCK TABLE bookings IN ACCESS EXCLUSIVE MODE');
      return work();
    });
  }
  const beside: Array<Promise<unknown>> = [];
  const stop = db.onQuery((text) => {
    if (/\b(bookings|sessions)\b/.test(text)) beside.push(db.query(`SELECT count(*) FROM generate_series(1, ${EMBEDDED_ROWS})`));
  });
  try {
    return await work();
  } finally {
    stop();
    await Promise.all(beside);
  }
}
