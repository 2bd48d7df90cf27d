import type { Queryable } from './database.ts';

/**
 * The data version of one workspace as an SQL expression, for a statement that reads it together
 * with something else (a feed token). `workspaceId` is a column or a parameter placeholder.
 * The version grows with every committed change to what a public answer is built from
 * (src/db/migrations/1763800700000_data-versions.sql); a workspace never written since the
 * migration reads as its one seeded slot.
 */
export function dataVersionExpression(workspaceId: string): string {
  return `(SELECT coalesce(sum(v.version), 0)::bigint FROM data_versions v WHERE v.workspace_id = ${workspaceId})`;
}

const READ_VERSION = `SELECT ${dataVersionExpression('$1')}`;

/**
 * The workspace's data version as of now: one statement, never cached, so that a change committed
 * before the call is always counted (READ COMMITTED: the statement's snapshot is taken when it
 * starts).
 */
export async function readDataVersion(db: Queryable, workspaceId: string): Promise<number> {
  const rows = await db.queryArrays(READ_VERSION, [workspaceId]);
  return Number(rows[0]?.[0] ?? 0);
}
