import type { PieceVersion } from './piece-version-store.ts';
import { TurnBudget } from './turn-budget.ts';

/** The chunks an answer is written in: large enough for few writes, small enough to copy in a moment. */
const CHUNK = 64 * 1024;

/** The pieces of an answer in its order with their versions, and its frame's version. */
export interface Listed {
  frame: string;
  pieces: PieceVersion[];
  /** Where the listing's snapshot stood, for a source that lists changes since (src/answer-cache/piece-version-store.ts). */
  mark?: string;
  /**
   * Listed from a previous listing and what changed since: the pieces whose rows were written
   * since, with their versions now, or null for those no longer listed. Every other piece is
   * listed as the previous listing listed it.
   */
  changed?: ReadonlyMap<string, string | null>;
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
  listed: Listed;
  head: string;
  tail: string;
  index: Map<string, KeptPiece>;
  /** Memory the index takes beyond the chunks (ids, versions, their entries), roughly. */
  indexBytes: number;
  /** Its index was handed on to the answer of a later version, which changed it: no answer can be built from this one any more. */
  handedOn: boolean;
  /** How many pieces were built for it; the others were reused. */
  built: number;
  /** The pieces of each chunk, in order; null for a chunk with the head or the tail. */
  chunkPieces: Array<readonly string[] | null>;
  /** The chunk each run of pieces starts, by its first piece's id. */
  chunkStarts: Map<string, number>;
}

/** Memory one entry of an index takes beyond the piece's bytes, roughly. */
export const indexEntryBytes = (id: string, version: string) => id.length + version.length + 96;

/** Where each piece of an answer lies: a new index (`filled` false) or an earlier answer's handed on, which holds every piece of the chunks taken again. */
export interface AssemblyIndex {
  entries: Map<string, KeptPiece>;
  bytes: number;
  filled: boolean;
}

/** The chunks of an earlier answer that may be sent again, unless one of its pieces changed (`dirty`, by the chunk's memory). */
export interface ChunkReuse {
  previous: PiecedBody;
  dirty: ReadonlySet<ArrayBufferLike>;
}

/**
 * The chunks of `previous` that may be sent again as they are: each holds a run of pieces (after a
 * separator each), by the id of its first, and none of them built again or gone (`rebuilt`, and
 * the pieces `changed` lists as no longer listed). Once an answer is split into many more chunks
 * than its size asks for (each change may leave a small one), none: everything is copied into full
 * chunks again.
 */
export function reusableChunks(previous: PiecedBody | null, rebuilt: ReadonlySet<string>, changed?: ReadonlyMap<string, string | null>): ChunkReuse | null {
  if (!previous || previous.chunks.length > (previous.length / CHUNK) * 2 + 16) return null;
  const dirty = new Set<ArrayBufferLike>();
  const mark = (id: string) => {
    const kept = previous.index.get(id);
    if (kept) dirty.add(kept.bytes.buffer);
  };
  for (const id of rebuilt) mark(id);
  if (changed) for (const [id, version] of changed) if (version === null) mark(id);
  return { previous, dirty };
}

/** The chunk of `reuse` that starts with `pieces[at]` and holds exactly the next pieces listed, none changed; else -1. */
function chunkAt(reuse: ChunkReuse, pieces: readonly PieceVersion[], at: number): number {
  const chunk = reuse.previous.chunkStarts.get(pieces[at]!.id);
  if (chunk === undefined || reuse.dirty.has(reuse.previous.chunks[chunk]!.buffer)) return -1;
  const ids = reuse.previous.chunkPieces[chunk]!;
  if (at + ids.length > pieces.length) return -1;
  for (let j = 0; j < ids.length; j += 1) {
    if (pieces[at + j]!.id !== ids[j]) return -1;
  }
  return chunk;
}

export interface Assembly {
  separator: string;
  head: string;
  /** The tail as of the last piece built (read once the pieces are written). */
  tail: () => string;
  listed: Listed;
  /** A promise when the piece is still to be built (its batch not read yet); null when `pieceOf` can answer now. */
  pending: (id: string) => Promise<void> | null;
  pieceOf: (id: string) => string | Buffer | undefined;
  reuse: ChunkReuse | null;
  index: AssemblyIndex;
}

/**
 * Writes head, pieces and tail into chunks of about `CHUNK` bytes, a piece never split, yielding
 * between slices. A chunk of the answer before that holds the same run of unchanged pieces is
 * taken as it is (`reuse`), so that a change copies a chunk or two, not the whole answer; with an
 * index handed on, the pieces of such a chunk are not even touched.
 */
export async function assemble({ separator, head, tail: tailNow, listed, pending: building, pieceOf, reuse, index }: Assembly): Promise<PiecedBody> {
  const budget = new TurnBudget();
  const chunks: Buffer[] = [];
  const chunkPieces: Array<readonly string[] | null> = [];
  const chunkStarts = new Map<string, number>();
  const entries = index.entries;
  let indexBytes = index.bytes;
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
        const kept = entries.get(part.id);
        if (kept) indexBytes -= indexEntryBytes(part.id, kept.version);
        entries.set(part.id, { version: part.version, bytes: chunk.subarray(offset, offset + part.bytes) });
        indexBytes += indexEntryBytes(part.id, part.version);
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
      if (!index.filled) {
        for (const id of ids) {
          const keptPiece = reuse!.previous.index.get(id)!;
          entries.set(id, keptPiece);
          indexBytes += indexEntryBytes(id, keptPiece.version);
        }
      }
      at += ids.length - 1;
      continue;
    }
    const waiting = building(piece.id);
    if (waiting) await waiting;
    const value = pieceOf(piece.id);
    // Listed when the versions were read, no longer when its piece was built: a later state, shown early.
    if (value === undefined) {
      const gone = index.filled ? entries.get(piece.id) : undefined;
      if (gone && entries.delete(piece.id)) indexBytes -= indexEntryBytes(piece.id, gone.version);
      continue;
    }
    if (!first) add(null, '', separator);
    first = false;
    add(piece.id, piece.version, value);
    if (pending >= CHUNK) flush();
    if (budget.spent) await budget.pause();
  }
  const tail = tailNow();
  if (tail.length > 0) framed = true;
  add(null, '', tail);
  if (pending > 0 || chunks.length === 0) flush();
  return { chunks, length, listed, head, tail, index: entries, indexBytes, handedOn: false, built: 0, chunkPieces, chunkStarts };
}
