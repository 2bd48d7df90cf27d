import type { Queryable } from '../db/database.ts';
import type { AnswerSources, CachedAnswer, PieceShape } from '../graphql/cache-sources.ts';

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
 * Which rows those are follows from what the cached operations read (src/graphql/cache-sources.ts):
 * the piece's own row and each row a `one` relation of it joins (a run's template; a booking's
 * participant, named only when the answer shows participants). A list under a piece (a run's
 * sessions) is folded into the piece's row: every change to it rewrites that row in the same
 * transaction (the listing triggers, src/db/code/listings.sql), so the scan reads no session. Listed as the answer lists its
 * pieces: the workspace's relation, its order and the column that must be set (/courses:
 * docs/contract-rules.md, `resources.course-listing` and `resources.course-order`).
 */
function versionParts(piece: PieceShape, variables: Readonly<Record<string, boolean>> | 'every') {
  const joined = piece.joined.filter((join) => join.includedIf === undefined || variables === 'every' || variables[join.includedIf] === true);
  const version = ['r.xmin::text', ...joined.map((join, at) => (join.optional ? `coalesce(j${at}.xmin::text, '')` : `j${at}.xmin::text`))].join(" || '.' || ");
  const joins = joined.map((join, at) => ` ${join.optional ? 'LEFT JOIN' : 'JOIN'} ${join.table} j${at} ON j${at}.${join.foreignColumn} = r.${join.localColumn}`).join('');
  return { joined, version, joins };
}

const orderBy = (piece: PieceShape, alias: string, flip = false) =>
  piece.list.order.map((term) => `${alias}.${term.column}${(term.direction === 'desc') !== flip ? ' DESC' : ''}`).join(', ');

/** The pieces of the workspace `$1` with their versions, in the answer's order; the first `$2` when limited. */
function versionsStatement(piece: PieceShape, variables: Readonly<Record<string, boolean>>, limited: boolean): string {
  const { version, joins } = versionParts(piece, variables);
  const present = piece.list.present ? ` AND r.${piece.list.present} IS NOT NULL` : '';
  return `SELECT r.${piece.key}, ${version} FROM ${piece.table} r${joins} WHERE r.${piece.list.workspaceColumn} = $1${present} ORDER BY ${orderBy(piece, 'r')}${limited ? ' LIMIT $2' : ''}`;
}

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
 * The pieces of the workspace `$1` written since the mark `$2`, directly or through a joined row:
 * their versions, and for a listed one the piece just before it in the listing now, by the
 * listing's own order and collation (else null); with the number of listed pieces and the mark of
 * this statement's snapshot, and how many transactions ago the mark was. One row when nothing
 * changed. One pass over the workspace's piece rows (no folded row, no sort); only what changed is
 * sent. The order must run one way (all ascending or all descending) for the row comparison.
 */
function changesStatement(piece: PieceShape): string {
  const directions = new Set(piece.list.order.map((term) => term.direction));
  if (directions.size !== 1) throw new Error(`The listing of ${piece.table} mixes ascending and descending order: its changes cannot be placed by one row comparison`);
  const descending = directions.has('desc');
  const { key, table } = piece;
  const ws = piece.list.workspaceColumn;
  const present = piece.list.present ?? null;
  const listedIf = (alias: string) => (present ? `${alias}.${present} IS NOT NULL` : 'true');
  // Every `@include` taken: the changes are those of every row any version joins.
  const { joined, version, joins } = versionParts(piece, 'every');
  const throughJoined = joined
    .map(
      (join) =>
        ` UNION SELECT w.${key} FROM ${table} w WHERE w.${join.localColumn} IN (SELECT jw.${join.foreignColumn} FROM ${join.table} jw WHERE` +
        `${join.workspaceColumn ? ` jw.${join.workspaceColumn} = $1 AND` : ''} ${WRITTEN_SINCE('jw.xmin')})`,
    )
    .join('');
  const columns = (alias: string) => piece.list.order.map((term) => `${alias}.${term.column}`).join(', ');
  return (
    `WITH n AS MATERIALIZED (SELECT count(*) FILTER (WHERE ${present ? `${present} IS NOT NULL` : 'true'}) AS listed, age($2::text::xid) AS mark_age,` +
    ` coalesce(array_agg(${key}) FILTER (WHERE ${WRITTEN_SINCE('xmin')}), '{}') AS ids FROM ${table} WHERE ${ws} = $1),` +
    ` changed AS MATERIALIZED (SELECT unnest(n.ids) AS id FROM n${throughJoined})` +
    ` SELECT c.id, c.version, c.after_id, n.listed::text, (pg_snapshot_xmin(pg_current_snapshot())::text::int8 % 4294967296)::text, n.mark_age` +
    ` FROM n LEFT JOIN LATERAL (SELECT r.${key} AS id, ${version} AS version,` +
    ` CASE WHEN ${listedIf('r')} THEN coalesce((SELECT p.${key} FROM ${table} p WHERE p.${ws} = $1 AND ${listedIf('p')}` +
    ` AND (${columns('p')}) ${descending ? '>' : '<'} (${columns('r')}) ORDER BY ${orderBy(piece, 'p', true)} LIMIT 1), '') END AS after_id` +
    ` FROM changed x JOIN ${table} r ON r.${key} = x.id${joins}) c ON true`
  );
}

/** The workspace row's version: the calendar's name. Empty when there is no such workspace. */
const WORKSPACE_VERSION = `SELECT w.xmin::text FROM workspaces w WHERE w.id = $1`;

const toPieces = (rows: unknown[][]): PieceVersion[] => rows.map((row) => ({ id: String(row[0]), version: String(row[1]) }));

/** The listed pieces of a workspace in the listing's order, and the mark a later listing may start from. */
export interface PieceListing {
  pieces: PieceVersion[];
  mark: string;
  /** Listed from a previous listing: the pieces written since, with their versions now, or null for those no longer listed. */
  changed?: Map<string, string | null>;
}

/**
 * The statements of each cached answer's pieces, built once from what its operations read
 * (src/graphql/cache-sources.ts).
 */
export class PieceVersionStore {
  readonly #statements: Map<CachedAnswer, { piece: PieceShape; changes: string | null; versions: Map<string, string> }>;

  constructor(sources: ReadonlyMap<CachedAnswer, AnswerSources>) {
    this.#statements = new Map([...sources].map(([answer, { piece }]) => [answer, { piece, changes: null, versions: new Map() }]));
  }

  #of(answer: CachedAnswer) {
    const statements = this.#statements.get(answer);
    if (!statements) throw new Error(`No pieces are declared for the cached answer ${answer}`);
    return statements;
  }

  /**
   * The workspace's listed pieces with their versions: from `previous` and the pieces written since
   * its mark when there is one, else every listed piece. A piece not written since keeps its place
   * and version; a piece written since leaves its place and, when listed, takes the place after the
   * piece the database names. A piece deleted since is seen by the count of listed pieces alone:
   * when the merged listing's count is not the database's (or a piece could not be placed), every
   * piece is listed again. `previous` must come from the same server (src/answer-cache/pieces.ts,
   * `piecesCarryOver`): transaction ids are its own.
   */
  async listing(answer: CachedAnswer, db: Queryable, workspaceId: string, previous: { pieces: readonly PieceVersion[]; mark?: string | undefined } | null): Promise<PieceListing> {
    const statements = this.#of(answer);
    if (previous?.mark !== undefined) {
      statements.changes ??= changesStatement(statements.piece);
      const merged = mergeChanges(previous.pieces, await db.queryArrays(statements.changes, [workspaceId, previous.mark]));
      if (merged) return merged;
    }
    const mark = String((await db.queryArrays(SNAPSHOT_MARK, []))[0]![0]);
    return { pieces: toPieces(await db.queryArrays(this.#versions(answer, {}, false), [workspaceId])), mark };
  }

  /** The first `limit` pieces of the workspace with their versions; a joined row `@include`d by a false variable is not even named. */
  async versions(answer: CachedAnswer, db: Queryable, workspaceId: string, limit: number, variables: Readonly<Record<string, boolean>>): Promise<PieceVersion[]> {
    return toPieces(await db.queryArrays(this.#versions(answer, variables, true), [workspaceId, limit]));
  }

  #versions(answer: CachedAnswer, variables: Readonly<Record<string, boolean>>, limited: boolean): string {
    const statements = this.#of(answer);
    const name = `${limited}:${JSON.stringify(variables)}`;
    let text = statements.versions.get(name);
    if (text === undefined) statements.versions.set(name, (text = versionsStatement(statements.piece, variables, limited)));
    return text;
  }
}

/** A mark this many transactions old is too old to compare with (ids wrap at 2³², compare within 2³¹). */
const MARK_AGE_LIMIT = 1_000_000_000;

/** `pieces` with the changed pieces of `rows` (`changesStatement`) taken out and put back where listed; null when the result cannot be trusted. */
function mergeChanges(pieces: readonly PieceVersion[], rows: unknown[][]): PieceListing | null {
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

export async function workspaceVersion(db: Queryable, workspaceId: string): Promise<string> {
  const rows = await db.queryArrays(WORKSPACE_VERSION, [workspaceId]);
  return rows.length > 0 ? String(rows[0]![0]) : '';
}
