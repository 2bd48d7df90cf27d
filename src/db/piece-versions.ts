import type { Queryable } from './database.ts';

/**
 * One piece of a list answer (a course run of /courses and the calendar feed, a booking of
 * /bookings): its id and a version that changes whenever anything the piece shows may have
 * changed. Listed in the answer's order.
 */
export interface PieceVersion {
  id: string;
  version: string;
}

/**
 * A piece's version is made of the `xmin` of the rows it is built from: the transaction that
 * wrote the row as it is now. Every write of a row (an update, a restore, plain SQL, a replicated
 * row) gives it a new `xmin`, which no earlier read of the row saw. Transaction ids repeat only
 * across servers (a physical restore starts another server, whose data version differs in its
 * start time: pieces are never kept across it) or after 2³² transactions, when they would also
 * have to meet the same row.
 *
 * A run's version: its own row and its template's (title, description, revision). Every change to
 * a run's sessions rewrites the run's row in the same transaction (the listing triggers, migration
 * 1763801850000_course-run-piece-versions.sql), so a session inserted, deleted, moved, cancelled or
 * edited changes it too, and the scan reads no session. Listed as /courses lists runs
 * (docs/contract-rules.md, `resources.course-listing` and `resources.course-order`: the published
 * runs with a scheduled session, by `listed_from` then id).
 */
const COURSE_RUN_VERSIONS =
  `SELECT r.id, r.xmin::text || '.' || t.xmin::text FROM course_runs r JOIN course_templates t ON t.id = r.template_id` +
  ` WHERE r.workspace_id = $1 AND r.listed_from IS NOT NULL ORDER BY r.listed_from, r.id`;

/**
 * A booking's version: its row, and its participant's where the answer shows participants (without
 * participants:read the participants table is not even named); the first `limit` as /bookings
 * lists them (newest first, ties by id descending).
 */
const BOOKING_VERSIONS = (withParticipant: boolean) =>
  withParticipant
    ? `SELECT b.id, b.xmin::text || '.' || coalesce(p.xmin::text, '') FROM bookings b LEFT JOIN participants p ON p.booking_id = b.id` +
      ` WHERE b.workspace_id = $1 ORDER BY b.created_at DESC, b.id DESC LIMIT $2`
    : `SELECT b.id, b.xmin::text FROM bookings b WHERE b.workspace_id = $1 ORDER BY b.created_at DESC, b.id DESC LIMIT $2`;
const [WITH_PARTICIPANTS, WITHOUT_PARTICIPANTS] = [BOOKING_VERSIONS(true), BOOKING_VERSIONS(false)];

/** The workspace row's version: the calendar's name. Empty when there is no such workspace. */
const WORKSPACE_VERSION = `SELECT w.xmin::text FROM workspaces w WHERE w.id = $1`;

const toPieces = (rows: unknown[][]): PieceVersion[] => rows.map((row) => ({ id: String(row[0]), version: String(row[1]) }));

export async function courseRunVersions(db: Queryable, workspaceId: string): Promise<PieceVersion[]> {
  return toPieces(await db.queryArrays(COURSE_RUN_VERSIONS, [workspaceId]));
}

export async function bookingVersions(db: Queryable, workspaceId: string, limit: number, withParticipant: boolean): Promise<PieceVersion[]> {
  return toPieces(await db.queryArrays(withParticipant ? WITH_PARTICIPANTS : WITHOUT_PARTICIPANTS, [workspaceId, limit]));
}

export async function workspaceVersion(db: Queryable, workspaceId: string): Promise<string> {
  const rows = await db.queryArrays(WORKSPACE_VERSION, [workspaceId]);
  return rows.length > 0 ? String(rows[0]![0]) : '';
}
