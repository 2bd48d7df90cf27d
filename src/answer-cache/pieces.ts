import type { Database, Queryable } from '../db/database.ts';
import { committedCount, serverOf, type DataVersion } from './data-version-store.ts';
import { assemble, indexEntryBytes, reusableChunks, type AssemblyIndex, type KeptPiece, type Listed, type PiecedBody } from './assemble.ts';
import { nextTurn } from './turn-budget.ts';

export type { KeptPiece, Listed, PiecedBody } from './assemble.ts';
export { TurnBudget, nextTurn } from './turn-budget.ts';

/** Where an answer is built: the primary's pool, or the one replica connection of the request. */
export type BuildTarget = Pick<Database, 'withConnection'>;

/** What one build of some pieces gives: the answer's frame as of now and the pieces it found. */
export interface BuiltPieces {
  /** The bytes before the first piece (`{"data":[`, a calendar's header with its name). */
  head: string;
  /** The bytes after the last piece. */
  tail: string;
  /** Each piece's exact text, by id. An id asked for and absent is no longer listed. */
  pieces: Map<string, string>;
}

/**
 * An answer that is a list of pieces (a course run, a booking) between a head and a tail, joined
 * by `separator`: `head + pieces.join(separator) + tail`, byte for byte what one build of the
 * whole would write.
 */
export interface PieceSource {
  readonly separator: string;
  /** How many pieces one build asks for at most: small enough that it holds the event loop a few milliseconds. */
  readonly batch: number;
  /**
   * The listed pieces in the answer's order, with their versions, and the version of the frame (a
   * few statements). `previous` is the listing of the answer whose pieces may be reused, if any: a
   * source may list what changed since it instead of every piece.
   */
  list(db: Queryable, previous: Listed | null): Promise<Listed>;
  /** The frame and the text of the pieces `ids` names, as a build of the whole writes them. */
  build(db: BuildTarget, ids: readonly string[]): Promise<BuiltPieces>;
}

/**
 * Whether the pieces of an answer of version `kept` may be reused for version `now`. Transaction
 * ids name writers on one server only: not across server starts. And only while the count grew:
 * the triggers only ever add to it, so a count that did not grow means `data_versions` was written
 * back by something else (a restore), which may have loaded rows without the triggers that keep
 * each run's version (src/answer-cache/piece-version-store.ts): then every piece is built again.
 */
export function piecesCarryOver(kept: DataVersion, now: DataVersion): boolean {
  return serverOf(kept) === serverOf(now) && committedCount(now) > committedCount(kept);
}

/**
 * The answer for `listed` (the pieces in order with their versions), built from `previous`
 * wherever a piece's version is the one kept, and from `source` for the rest: only the changed
 * pieces are read and serialised again. `previous` null builds every piece. Pieces are built
 * `source.batch` at a time, each batch when the assembly reaches it, and assembled in slices,
 * yielding between them.
 *
 * When the listing says what changed since `previous`'s, the work grows with the change: only
 * the changed pieces are compared, and `previous`'s index is handed on and updated where they lie
 * instead of being copied whole (`previous` is marked, and never built from again).
 */
export async function buildInPieces(source: PieceSource, db: BuildTarget, listed: Listed, previous: PiecedBody | null): Promise<PiecedBody> {
  if (previous?.handedOn) throw new Error('an answer whose index was handed on was built from again');
  const changed = previous ? listed.changed : undefined;
  const wanted: string[] = [];
  if (changed) {
    for (const [id, version] of changed) if (version !== null && previous!.index.get(id)?.version !== version) wanted.push(id);
  } else {
    for (const piece of listed.pieces) if (previous?.index.get(piece.id)?.version !== piece.version) wanted.push(piece.id);
  }
  let head = previous?.head ?? '';
  let tail = previous?.tail ?? '';
  // Built pieces wait here until assembled, then go: a cold build's texts die young, batch by batch.
  const fresh = new Map<string, string>();
  const asked = new Set<string>();
  let next = 0;
  const buildNext = async () => {
    if (next > 0) await nextTurn();
    const ids = wanted.slice(next, (next += source.batch));
    const built = await source.build(db, ids);
    tail = built.tail;
    for (const id of ids) asked.add(id);
    for (const [id, text] of built.pieces) fresh.set(id, text);
    return built;
  };
  const frameKnown = previous !== null && previous.listed.frame === listed.frame;
  if (wanted.length > 0 || !frameKnown) head = (await buildNext()).head;
  const rebuilt = new Set(wanted);
  const reuse = reusableChunks(previous, rebuilt, changed);
  const index = changed ? handOn(previous!, changed) : { entries: new Map<string, KeptPiece>(), bytes: 0, filled: false };
  const buildUntil = async (id: string) => {
    while (!asked.has(id) && next < wanted.length) await buildNext();
  };
  const pieceOf = (id: string) => {
    const text = fresh.get(id);
    if (text !== undefined) {
      fresh.delete(id);
      return text;
    }
    return rebuilt.has(id) ? undefined : previous?.index.get(id)?.bytes;
  };
  const body = await assemble({
    separator: source.separator,
    head,
    tail: () => tail,
    listed,
    pending: (id) => (rebuilt.has(id) && !asked.has(id) ? buildUntil(id) : null),
    pieceOf,
    reuse,
    index,
  });
  body.built = wanted.length;
  return body;
}

/** `previous`'s index for the next answer: the pieces no longer listed taken out; `previous` marked. */
function handOn(previous: PiecedBody, changed: ReadonlyMap<string, string | null>): AssemblyIndex {
  previous.handedOn = true;
  const entries = previous.index;
  let bytes = previous.indexBytes;
  for (const [id, version] of changed) {
    const kept = version === null ? entries.get(id) : undefined;
    if (kept && entries.delete(id)) bytes -= indexEntryBytes(id, kept.version);
  }
  return { entries, bytes, filled: true };
}
