import type { Queryable } from '../db/database.ts';

/**
 * The data version of one workspace: two reads that return the same version saw the same data of
 * the workspace. Opaque: compare for equality only.
 */
export type DataVersion = string;

/**
 * The server's start, in microseconds. A physical restore (point in time, or a standby promoted
 * without the last transactions) starts another server that hands out again the transaction ids
 * of the lost history: its versions must not meet those of the old server.
 */
const SERVER_START = '(extract(epoch FROM pg_postmaster_start_time()) * 1000000)::bigint';

/**
 * The data version of one workspace as an SQL expression of type text, for a statement that reads
 * it together with something else (a feed token). `workspaceId` is a column or a parameter
 * placeholder.
 *
 * The count of its slots grows with every committed change to what a public answer is built from
 * (src/db/migrations/1763800700000_data-versions.sql). Beside it, each slot's `xmin`: the
 * transaction that wrote the slot's row as it is now. Whatever writes `data_versions` (a trigger,
 * a restore that puts older counts back, plain SQL) writes new rows with its own, new transaction
 * id, which no earlier read of the workspace has seen: a restore that sets the count back to a
 * number already read still gives a version never read before.
 *
 * NULL when the workspace has no slot (`data_versions` emptied by hand): nothing can then tell
 * whether its data changed, so nothing is cached for it until its next write creates a slot.
 */
export function dataVersionExpression(workspaceId: string): string {
  return (
    `(SELECT sum(v.version) || '/' || string_agg(v.slot || ':' || v.xmin, ',' ORDER BY v.slot) || '/' || ${SERVER_START}` +
    ` FROM data_versions v WHERE v.workspace_id = ${workspaceId})`
  );
}

const READ_VERSION = `SELECT ${dataVersionExpression('$1')}`;

/**
 * The workspace's data version as of now: one statement, never cached, so that a change committed
 * before the call is always counted (READ COMMITTED: the statement's snapshot is taken when it
 * starts). Null when the workspace has none.
 */
export async function readDataVersion(db: Queryable, workspaceId: string): Promise<DataVersion | null> {
  const rows = await db.queryArrays(READ_VERSION, [workspaceId]);
  return toDataVersion(rows[0]?.[0]);
}

/** A version as a statement returned it (the expression above). */
export function toDataVersion(value: unknown): DataVersion | null {
  return typeof value === 'string' ? value : null;
}

/**
 * The count part of a version: how many changes to the workspace its server had committed. Along
 * one history (a primary and the standbys that replay it) a larger count is a later state; it is
 * what orders versions read on different servers, whose versions never compare equal.
 */
export function committedCount(version: DataVersion): number {
  return Number.parseInt(version.slice(0, version.indexOf('/')), 10);
}

/**
 * The server part of a version (its start time). Transaction ids name rows' writers only on one
 * server: what was learnt of rows under one server's versions is not kept for another's.
 */
export function serverOf(version: DataVersion): string {
  return version.slice(version.lastIndexOf('/') + 1);
}

/**
 * Runs `work` on `connection` in one REPEATABLE READ, READ ONLY transaction that first reads the
 * workspace's data version: every statement of `work` sees exactly the data that version counts,
 * on a primary and on a standby alike. Where answers from several servers meet (read replicas),
 * an answer's version then says exactly how new it is, not merely how new it is at least.
 */
export async function inVersionSnapshot<T>(connection: Queryable, workspaceId: string, work: () => Promise<T>): Promise<{ version: DataVersion | null; value: T }> {
  await connection.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const version = await readDataVersion(connection, workspaceId);
    const value = await work();
    await connection.query('COMMIT');
    return { version, value };
  } catch (error) {
    await connection.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
