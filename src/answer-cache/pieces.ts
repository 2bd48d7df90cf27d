import { performance } from 'node:perf_hooks';
import type { Database, Queryable } from '../db/database.ts';
import { committedCount, serverOf, type DataVersion } from '../db/data-versions.ts';
import type { PieceVersion } from '../db/piece-versions.ts';

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
  /** The listed pieces in the answer's order, with their versions, and the version of the frame (one or two statements). */
  list(db: Queryable): Promise<{ frame: string; pieces: PieceVersion[] }>;
  /** The frame and the text of the pieces `ids` names, as a build of the whole writes them. */
  build(db: BuildTarget, ids: readonly string[]): Promise<BuiltPieces>;
}

/** A piece kept: its version and its bytes, a view into one of the answer's chunks. */
export interface KeptPiece {
  version: string;
  bytes: Buffer;
}

/** An answer assembled from pieces: its chunks, and where each piece lies in them. */
export interface PiecedBody {
  chunks: Buffer[];
  length: number;
  frame: string;
  head: string;
  tail: string;
  index: Map<string, KeptPiece>;
  /** Memory the index takes beyond the chunks (ids, versions, their entries), roughly. */
  indexBytes: number;
  /** How many pieces were built for it; the others were reused. */
  built: number;
  /** The pieces of each chunk, in order; null for a chunk with the head or the tail. */
  chunkPieces: Array<readonly string[] | null>;
  /** The chunk each run of pieces starts, by its first piece's id. */
  chunkStarts: Map<string, number>;
}

/**
 * Whether the pieces of an answer of version `kept` may be reused for version `now`. Transaction
 * ids name writers on one server only: not across server starts. And only while the count grew:
 * the triggers only ever add to it, so a count that did not grow means `data_versions` was written
 * back by something else (a restore), which may have loaded rows without the triggers that keep
 * each run's version (src/db/piece-versions.ts): then every piece is built again.
 */
export function piecesCarryOver(kept: DataVersion, now: DataVersion): boolean {
  return serverOf(kept) === serverOf(now) && committedCount(now) > committedCount(kept);
}

/** The chunks an answer is written in: large enough for few writes, small enough to copy in a moment. */
const CHUNK = 64 * 1024;
/** No turn of the event loop spends longer than this assembling one answer. */
const TURN_MS = 3;

export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A clock that says when the current turn has had its share: then `pause` yields to others. */
export class TurnBudget {
  #since = performance.now();
  /** Whether this turn has had its share: then `await budget.pause()`. Checked without awaiting, so that a piece that fits costs no microtask. */
  get spent(): boolean {
    return performance.now() - this.#since >= TURN_MS;
  }
  async pause(): Promise<void> {
    await nextTurn();
    this.#since = performance.now();
  }
}

/**
 * The answer for `listed` (the pieces in order with their versions), built from `previous`
 * wherever a piece's version is the one kept, and from `source` for the rest: only the changed
 * pieces are read and serialised again. `previous` null builds every piece. Pieces are built
 * `source.batch` at a time and assembled in slices, yielding between them.
 */
export async function buildInPieces(
  source: PieceSource,
  db: BuildTarget,
  listed: { frame: string; pieces: PieceVersion[] },
  previous: PiecedBody | null,
): Promise<PiecedBody> {
  const wanted: string[] = [];
  for (const piece of listed.pieces) {
    if (previous?.index.get(piece.id)?.version !== piece.version) wanted.push(piece.id);
  }
  let head = previous?.head ?? '';
  let tail = previous?.tail ?? '';
  const fresh = new Map<string, string>();
  const frameKnown = previous !== null && previous.frame === listed.frame;
  if (wanted.length > 0 || !frameKnown) {
    for (let start = 0; start === 0 || start < wanted.length; start += source.batch) {
      const built = await source.build(db, wanted.slice(start, start + source.batch));
      head = built.head;
      tail = built.tail;
      for (const [id, text] of built.pieces) fresh.set(id, text);
      if (start + source.batch < wanted.length) await nextTurn();
    }
  }
  const rebuilt = new Set(wanted);
  const body = await assemble(source.separator, head, tail, listed, (id) => fresh.get(id) ?? (rebuilt.has(id) ? undefined : previous?.index.get(id)?.bytes), reusableChunks(previous, rebuilt));
  body.built = wanted.length;
  return body;
}

/**
 * The chunks of `previous` that may be sent again as they are: each holds a run of pieces (after a
 * separator each), by the id of its first. Once an answer is split into many more chunks than its
 * size asks for (each change may leave a small one), none: everything is copied into full chunks
 * again.
 */
function reusableChunks(previous: PiecedBody | null, rebuilt: ReadonlySet<string>): ChunkReuse | null {
  if (!previous || previous.chunks.length > (previous.length / CHUNK) * 2 + 16) return null;
  return { previous, rebuilt };
}

interface ChunkReuse {
  previous: PiecedBody;
  rebuilt: ReadonlySet<string>;
}

/** The chunk of `reuse` that starts with `pieces[at]` and holds exactly the next pieces listed, each unchanged; else -1. */
function chunkAt(reuse: ChunkReuse, pieces: readonly PieceVersion[], at: number): number {
  const chunk = reuse.previous.chunkStarts.get(pieces[at]!.id);
  if (chunk === undefined) return -1;
  const ids = reuse.previous.chunkPieces[chunk]!;
  if (at + ids.length > pieces.length) return -1;
  for (let j = 0; j < ids.length; j += 1) {
    const id = pieces[at + j]!.id;
    if (id !== ids[j] || reuse.rebuilt.has(id)) return -1;
  }
  return chunk;
}

/**
 * Writes head, pieces and tail into chunks of about `CHUNK` bytes, a piece never split, yielding
 * between slices. A chunk of the answer before that holds the same run of unchanged pieces is
 * taken as it is (`reuse`), so that a change copies a chunk or two, not the whole answer.
 */
async function assemble(
  separator: string,
  head: string,
  tail: string,
  listed: { frame: string; pieces: PieceVersion[] },
  pieceOf: (id: string) => string | Buffer | undefined,
  reuse: ChunkReuse | null,
): Promise<PiecedBody> {
  const budget = new TurnBudget();
  const chunks: Buffer[] = [];
  const chunkPieces: Array<readonly string[] | null> = [];
  const chunkStarts = new Map<string, number>();
  const index = new Map<string, KeptPiece>();
  let indexBytes = 0;
  let length = 0;
  // The pending chunk: texts and pieces not written yet, and their byte length.
  let parts: Array<{ id: string | null; version: string; value: string | Buffer; bytes: number }> = [];
  let pending = 0;
  let framed = false;
  const flush = () => {
    const chunk = Buffer.allocUnsafeSlow(pending);
    const ids: string[] = [];
    let offset = 0;
    for (const part of parts) {
      if (typeof part.value === 'string') chunk.write(part.value, offset, 'utf8');
      else part.value.copy(chunk, offset);
      if (part.id !== null) {
        index.set(part.id, { version: part.version, bytes: chunk.subarray(offset, offset + part.bytes) });
        ids.push(part.id);
      }
      offset += part.bytes;
    }
    // Only a chunk of separators and pieces alone may be taken again: not one with the head or the tail.
    if (ids.length > 0 && !framed) chunkStarts.set(ids[0]!, chunks.length);
    chunkPieces.push(framed ? null : ids);
    chunks.push(chunk);
    length += pending;
    parts = [];
    pending = 0;
    framed = false;
  };
  const add = (id: string | null, version: string, value: string | Buffer) => {
    const bytes = typeof value === 'string' ? Buffer.byteLength(value, 'utf8') : value.length;
    if (bytes === 0) return;
    parts.push({ id, version, value, bytes });
    pending += bytes;
  };
  framed = head.length > 0;
  add(null, '', head);
  let first = true;
  const { pieces } = listed;
  for (let at = 0; at < pieces.length; at += 1) {
    const piece = pieces[at]!;
    const kept = reuse && !first ? chunkAt(reuse, pieces, at) : -1;
    if (kept >= 0) {
      if (pending > 0) flush();
      const ids = reuse!.previous.chunkPieces[kept]!;
      chunkStarts.set(ids[0]!, chunks.length);
      chunkPieces.push(ids);
      chunks.push(reuse!.previous.chunks[kept]!);
      length += reuse!.previous.chunks[kept]!.length;
      for (const id of ids) {
        const keptPiece = reuse!.previous.index.get(id)!;
        index.set(id, keptPiece);
        indexBytes += id.length + keptPiece.version.length + 96;
      }
      at += ids.length - 1;
      continue;
    }
    const value = pieceOf(piece.id);
    // Listed when the versions were read, no longer when its piece was built: a later state, shown early.
    if (value === undefined) continue;
    if (!first) add(null, '', separator);
    first = false;
    add(piece.id, piece.version, value);
    indexBytes += piece.id.length + piece.version.length + 96;
    if (pending >= CHUNK) flush();
    if (budget.spent) await budget.pause();
  }
  if (tail.length > 0) framed = true;
  add(null, '', tail);
  if (pending > 0 || chunks.length === 0) flush();
  return { chunks, length, frame: listed.frame, head, tail, index, indexBytes, built: 0, chunkPieces, chunkStarts };
}
