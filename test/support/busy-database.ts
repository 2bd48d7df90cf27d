import type { Database } from '../../src/db/database.ts';

/** How long each statement of `work` that reads bookings or sessions waits on the embedded engine. */
const EMBEDDED_WAIT_MS = 60;

/**
 * Runs `work` while the database is busy with another client's work, so that the statements
 * `work` sends take database time that no estimate foresees. On PostgreSQL a transaction holds
 * the bookings table (`LOCK TABLE … ACCESS EXCLUSIVE`): a statement reading bookings waits for it
 * until it is cancelled. The embedded engine runs in this process, one statement at a time: what
 * keeps it busy keeps the process's one thread busy. That is done here as the statement is sent
 * (a query listener runs then, inside the statement's measured time), for a fixed time, so that
 * the wait falls on `work`'s own statements however loaded the machine is.
 */
export async function whileBusy<T>(db: Database, work: () => Promise<T>): Promise<T> {
  if (db.kind === 'postgres') {
    return db.transaction(async (tx) => {
      await tx.query('LOCK TABLE bookings IN ACCESS EXCLUSIVE MODE');
      return work();
    });
  }
  const stop = db.onQuery((text) => {
    if (!/\b(bookings|sessions)\b/.test(text)) return;
    const until = performance.now() + EMBEDDED_WAIT_MS;
    while (performance.now() < until) {
      // The engine's thread, held as another client's statement would hold it.
    }
  });
  try {
    return await work();
  } finally {
    stop();
  }
}
