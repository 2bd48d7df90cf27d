import type { Database, Queryable } from './database.ts';

/** SQLSTATE of a transaction PostgreSQL rolled back to break a deadlock. */
const DEADLOCK_DETECTED = '40P01';
const ATTEMPTS = 3;

function isDeadlock(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if ((cause as { code?: unknown }).code === DEADLOCK_DETECTED) return true;
  }
  return false;
}

/**
 * `work` in one transaction, run again when PostgreSQL chose it as a deadlock's victim, at most
 * three times in all. For an operator's change whose rows a worker may lock in another order at
 * the same moment (a claim leasing several deliveries of the endpoint being removed): the victim
 * was rolled back whole, so running `work` again is the same change. Only for work whose effects
 * are all in the transaction.
 */
export async function transactionRetryingDeadlocks<T>(db: Pick<Database, 'transaction'>, work: (tx: Queryable) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db.transaction(work);
    } catch (error) {
      if (!isDeadlock(error) || attempt >= ATTEMPTS) throw error;
    }
  }
}
