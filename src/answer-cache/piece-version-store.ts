import type { Queryable } from '../db/database.ts';

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
 * a run's sessions rewrites the run's row in the same transaction (the listing triggers,
 * src/db/code/listings.sql), so a session inserted, deleted, moved, cancelled or
 * edited changes it too, and the scan reads no session. Listed as /courses lists runs
 * (docs/contract-rules.md, `resources.course-listing` and `resources.course-order`: the published
 * runs with a scheduled session, by `listed_from` then id).
 */
const COURSE_RUN_VERSIONS =
  `SELECT r.id, r.xmin::text || '.' || t.xmin::text FROM course_runs r JOIN course_templates t ON t.id = r.template_id` +
  ` WHERE r.workspace_id = $1 AND r.listed_from IS NOT NULL ORDER BY r.listed_from, r.id`;

/**
 * Where a listing's snapshot stood: the oldest transaction it did not see yet, as a transaction id
 * (what `xmin` holds). Read before the listing, it is at most the listing's own (a snapshot's
 * oldest running transaction only moves forward), which only widens the next change set.
 */
const SNAPSHOT_MARK = `SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::int8 % 4294967296)::text`;

/**
 * Whether a row was written at or after the mark `$2`: every write a snapshot did not see is, and
 * `age` counts back from a transaction after every row this statement sees, in the wrapping order
 * transaction ids keep (a frozen row is as old as can be).
 */
const WRITTEN_SINCE = (xmin: string) => `age(${xmin}) <= age($2::text::xid)`;

/**
 * The runs of the workspace written since the mark `$2`, directly or through their template:
 * their versions, and for a listed one the run just before it in the listing now, by the
 * listing's own order and collation (else null); with the number of listed runs and the mark of
 * this statement's snapshot, and how many transactions ago the mark was. One row when nothing
 * changed. One pass over the workspace's run rows (no session, no sort); only what changed is sent.
 */
const COURSE_RUN_CHANGES =
  `WITH n AS MATERIALIZED (SELECT count(*) FILTER (WHERE listed_from IS NOT NULL) AS listed, age($2::text::xid) AS mark_age,` +
  ` coalesce(array_agg(id) FILTER (WHERE ${WRITTEN_SINCE('xmin')}), '{}') AS ids FROM course_runs WHERE workspace_id = $1),` +
  ` changed AS MATERIALIZED (SELECT unnest(n.ids) AS id FROM n UNION SELECT w.id FROM course_runs w WHERE w.template_id IN` +
  ` (SELECT wt.id FROM course_templates wt WHERE wt.workspace_id = $1 AND ${WRITTEN_SINCE('wt.xmin')}))` +
  ` SELECT c.id, c.version, c.after_id, n.listed::text, (pg_snapshot_xmin(pg_current_snapshot())::text::int8 % 4294967296)::text, n.mark_age` +
  ` FROM n LEFT JOIN LATERAL (SELECT r.id, r.xmin::text || '.' || t.xmin::text AS version,` +
  ` CASE WHEN r.listed_from IS NOT NULL THEN coalesce((SELECT p.id FROM course_runs p WHERE p.workspace_id = $1 AND p.listed_from IS NOT NULL` +
  ` AND (p.listed_from, p.id) < (r.listed_from, r.id) ORDER BY p.listed_from DESC, p.id DESC LIMIT 1), '') END AS after_id` +
  ` FROM changed x JOIN course_runs r ON r.id = x.id JOIN course_templates t ON t.id = r.template_id) c ON true`;

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

/** The listed runs of a workspace in the listing's order, and the mark a later listing may start from. */
export interface RunListing {
  pieces: PieceVersion[];
  mark: string;
  /** Listed from a previous listing: the runs written since, with their versions now, or null for those no longer listed. */
  changed?: Map<string, string | null>;
}

/**
 * The workspace's listed runs with their versions: from `previous` and the runs written since its
 * mark when there is one, else every listed run. A run not written since keeps its place and
 * version; a run written since leaves its place and, when listed, takes the place after the run
 * the database names. A run deleted since is seen by the count of listed runs alone: when the
 * merged listing's count is not the database's (or a run could not be placed), every run is
 * listed again. `previous` must come from the same server (src/answer-cache/pieces.ts,
 * `piecesCarryOver`): transaction ids are its own.
 */
export async function courseRunListing(db: Queryable, workspaceId: string, previous: { pieces: readonly PieceVersion[]; mark?: string | undefined } | null): Promise<RunListing> {
  if (previous?.mark !== undefined) {
    const merged = mergeChanges(previous.pieces, await db.queryArrays(COURSE_RUN_CHANGES, [workspaceId, previous.mark]));
    if (merged) return merged;
  }
  const mark = String((await db.queryArrays(SNAPSHOT_MARK, []))[0]![0]);
  return { pieces: toPieces(await db.queryArrays(COURSE_RUN_VERSIONS, [workspaceId])), mark };
}

/** A mark this many transactions old is too old to compare with (ids wrap at 2³², compare within 2³¹). */
const MARK_AGE_LIMIT = 1_000_000_000;

/** `pieces` with the changed runs of `rows` (COURSE_RUN_CHANGES) taken out and put back where listed; null when the result cannot be trusted. */
function mergeChanges(pieces: readonly PieceVersion[], rows: unknown[][]): RunListing | null {
  const first = rows[0];
  if (!first) return null;
  const [listedCount, mark, markAge] = [Number(first[3]), String(first[4]), Number(first[5])];
  // Transaction ids compare within half their range only: a mark that old, the runs are listed again.
  if (!(markAge >= 0 && markAge < MARK_AGE_LIMIT)) return null;
  const changed = new Map<string, string | null>();
  // The changed listed runs by the id of the run before each ('' for the first): one chain per kept run.
  const after = new Map<string, PieceVersion>();
  for (const row of rows) {
    if (row[0] === null) continue;
    const id = String(row[0]);
    const listed = row[2] !== null;
    changed.set(id, listed ? String(row[1]) : null);
    if (listed) after.set(String(row[2]), { id, version: String(row[1]) });
  }
  const merged: PieceVersion[] = [];
  let placed = 0;
  const follow = (id: string) => {
    for (let next = after.get(id); next !== undefined; next = after.get(next.id)) {
      merged.push(next);
      placed += 1;
    }
  };
  follow('');
  for (const piece of pieces) {
    if (changed.has(piece.id)) continue;
    merged.push(piece);
    follow(piece.id);
  }
  return placed === after.size && merged.length === listedCount ? { pieces: merged, mark, changed } : null;
}

export async function bookingVersions(db: Queryable, workspaceId: string, limit: number, withParticipant: boolean): Promise<PieceVersion[]> {
  return toPieces(await db.queryArrays(withParticipant ? WITH_PARTICIPANTS : WITHOUT_PARTICIPANTS, [workspaceId, limit]));
}

export async function workspaceVersion(db: Queryable, workspaceId: string): Promise<string> {
  const rows = await db.queryArrays(WORKSPACE_VERSION, [workspaceId]);
  return rows.length > 0 ? String(rows[0]![0]) : '';
}
