import type { Queryable } from '../db/database.ts';

/**
 * Deletes the rows (of rate-limiter-flexible's PostgreSQL store) whose window ended before `nowMs`:
 * an ended window counts as no row at all, so nothing is lost and the table holds only the keys
 * seen in the current windows.
 */
export async function deleteEndedWindows(db: Queryable, nowMs: number): Promise<number> {
  const deleted = await db.query('DELETE FROM rate_limits WHERE expire < $1', [nowMs]);
  return deleted.rowCount ?? 0;
}
