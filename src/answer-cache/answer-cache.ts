import { LRUCache } from 'lru-cache';
import { Flights, NextFlights, Turns } from '../flights.ts';
import type { Database } from '../db/database.ts';
import { committedCount, inVersionSnapshot, readDataVersion, type DataVersion } from './data-version-store.ts';
import type { ReplicaSet } from '../db/replicas.ts';
import { isDatabaseUnavailable } from '../errors.ts';
import { keyOf, type Answer, type AnswerRequest } from './answer-request.ts';
import { isReplicaFailure, lengthOf, onConnection, ownCopy } from './build-targets.ts';
import { buildInPieces, piecesCarryOver, type BuildTarget, type PiecedBody, type PieceSource } from './pieces.ts';
import { ServedCounts } from './served-counts.ts';

export type { Answer, AnswerRequest, CacheOutcome } from './answer-request.ts';
export type { BuildTarget, BuiltPieces, PieceSource } from './pieces.ts';

export interface AnswerCacheOptions {
  /** The bound of the cached bytes (bodies and keys); 0 turns the cache off. */
  maxBytes: number;
  db: Pick<Database, 'withConnection'>;
  /** Streaming replicas that take the reads while they keep up (DATABASE_REPLICA_URL). */
  replicas?: { set: Pick<ReplicaSet, 'reader'>; maxLagMs: number } | undefined;
}

/** Builds the exact bytes of an answer, reading through `db`. */
export type BuildAnswer = (db: BuildTarget) => Promise<Buffer[]>;

interface Entry {
  version: DataVersion;
  /** When this instance learnt the version (see `#learnt`). */
  learnt: number;
  body: readonly Buffer[];
  length: number;
  /** For an answer made of pieces: where each lies in `body`, with its version. */
  pieced?: PiecedBody | undefined;
}

interface Built {
  body: Buffer[];
  length: number;
  stored: boolean;
}

/**
 * The answer cache: the exact bytes of answers (a list body, a calendar feed), keyed by workspace
 * and data version. A byte-bounded LRU in front of the fixed operations, exact across
 * instances: an entry is served only to a request whose own read of the workspace's data version
 * (one statement, never cached) returns the entry's version, and a committed change to anything the
 * answer is built from moves that version in the writing transaction. One entry per answer,
 * workspace and variables: a newer version replaces an older one.
 *
 * An entry is stored under the version read before its answer was built. Each of the build's
 * statements starts after that read, so it sees every change the version counts (and perhaps later
 * ones): whoever reads that version later read it before any later change committed, so the entry
 * holds everything committed before their request started, which is what exactness asks. An
 * entry may show a later change early, never miss one it should show.
 */
export class AnswerCache {
  readonly maxBytes: number;
  readonly #db: Pick<Database, 'withConnection'>;
  readonly #replicas: AnswerCacheOptions['replicas'];
  /** With replicas only: how new the answers served lately were, per workspace. */
  readonly #served: ServedCounts | null;
  readonly #entries: LRUCache<string, Entry> | null;
  /** Builds under way, by key and version: concurrent requests for the same answer share one. */
  readonly #builds = new Flights<string, Built>();
  readonly #pieceBuilds = new Turns<string>();
  /** Version reads by workspace: at most one on the wire, and a request shares only one not sent yet. */
  readonly #versionReads = new NextFlights<string, DataVersion | null>();
  /**
   * Counts the versions this instance learnt, in the order it learnt them. Versions are opaque, so
   * this order decides which of two builds of different versions keeps the entry. A workspace's
   * reads here are sent one after the other, so a version learnt later is a later one; a version a
   * caller read itself (with a feed token) may come out of order, which costs a build, never
   * exactness: an entry is served only to a request that read its version.
   */
  #learnt = 0;
  #evictions = 0;
  /** Pieces of answers assembled so far, reused from an earlier version's answer or built (read by the metrics). */
  readonly pieces = { reused: 0, built: 0 };

  constructor(options: AnswerCacheOptions) {
    this.maxBytes = options.maxBytes;
    this.#db = options.db;
    this.#replicas = options.replicas;
    this.#served = options.replicas ? new ServedCounts(options.replicas.maxLagMs) : null;
    this.#entries =
      options.maxBytes > 0
        ? new LRUCache<string, Entry>({
            maxSize: options.maxBytes,
            sizeCalculation: (entry, key) => entry.length + key.length + (entry.pieced?.indexBytes ?? 0),
            dispose: (_entry, _key, reason) => {
              if (reason === 'evict') this.#evictions += 1;
            },
          })
        : null;
  }

  get enabled(): boolean {
    return this.#entries !== null;
  }

  /** Bytes held now (bodies and keys). */
  get bytes(): number {
    return this.#entries?.calculatedSize ?? 0;
  }

  get entries(): number {
    return this.#entries?.size ?? 0;
  }

  /** Entries evicted so far to keep within the bound (read by the metrics when scraped). */
  get evictions(): number {
    return this.#evictions;
  }

  /**
   * The answer for this request: cached bytes of the workspace's current data version, or built by
   * `build` (the exact bytes to send, in pieces). With replicas, a replica that keeps up answers
   * when it holds at least what this instance last served of the workspace; the primary otherwise.
   */
  async answer(request: AnswerRequest, build: BuildAnswer): Promise<Answer> {
    const reader = this.#replicas?.set.reader(request.workspaceId);
    if (reader) {
      try {
        const answered = await this.#fromReplica(reader.db, `replica ${reader.replica}`, request, build);
        if (answered) return answered;
      } catch (error) {
        if (!isReplicaFailure(error)) throw error;
        reader.failed(error);
      }
    }
    return this.#fromPrimary(request, build);
  }

  /**
   * An answer made of pieces (a course run, a booking; src/answer-cache/pieces.ts): after a change
   * only the pieces whose versions moved are read and serialised again, the others' bytes are
   * reused, and the whole is assembled in the order just listed, yielding as it goes. `whole` is
   * the build of the whole answer in one operation, used with the cache off. With replicas, and
   * for a workspace without a data version or an answer larger than the bound, every piece is
   * built (still yielding) and nothing is kept.
   */
  async answerInPieces(request: AnswerRequest, source: PieceSource, whole: BuildAnswer): Promise<Answer> {
    const everyPiece: BuildAnswer = async (db) => (await this.#piecesOf(source, db, null)).chunks;
    const entries = this.#entries;
    if (!entries || this.#replicas) return this.answer(request, entries ? everyPiece : whole);
    const version = request.version !== undefined ? request.version : await this.#readVersion(request.workspaceId);
    if (version === null) {
      const body = await everyPiece(this.#db);
      return { body, length: lengthOf(body), outcome: 'bypass' };
    }
    const learnt = (this.#learnt += 1);
    const key = keyOf(request);
    const cached = entries.get(key);
    if (cached?.version === version) return { body: cached.body, length: cached.length, outcome: 'hit' };
    const { value: built, joined } = await this.#builds.share(`${key}\n${version}`, () =>
      // One build of an answer at a time: a build of a newer version waits for the one under way,
      // then builds only what changed since, instead of each version building everything alike.
      this.#pieceBuilds.inTurn(key, async () => {
        const previous = entries.peek(key);
        const reusable = previous?.pieced && !previous.pieced.handedOn && piecesCarryOver(previous.version, version) ? previous.pieced : null;
        const body = await this.#piecesOf(source, this.#db, reusable);
        return this.#build(key, version, learnt, body.chunks, body);
      }),
    );
    return { body: built.body, length: built.length, outcome: !built.stored ? 'bypass' : joined ? 'shared' : 'miss' };
  }

  async #piecesOf(source: PieceSource, db: BuildTarget, previous: PiecedBody | null): Promise<PiecedBody> {
    const listed = await db.withConnection((connection) => source.list(connection, previous?.listed ?? null));
    const body = await buildInPieces(source, db, listed, previous);
    this.pieces.built += body.built;
    this.pieces.reused += body.index.size - Math.min(body.index.size, body.built);
    return body;
  }

  async #fromPrimary(request: AnswerRequest, build: BuildAnswer): Promise<Answer> {
    const entries = this.#entries;
    if (!entries) {
      const body = await this.#buildCounted(this.#db, request, build);
      return { body, length: lengthOf(body), outcome: 'off' };
    }
    const version = request.version !== undefined ? request.version : await this.#readVersion(request.workspaceId);
    if (version === null) {
      // Nothing says whether the data changed since an entry was built: neither serve nor store one.
      const body = await this.#buildCounted(this.#db, request, build);
      return { body, length: lengthOf(body), outcome: 'bypass' };
    }
    const learnt = (this.#learnt += 1);
    const key = keyOf(request);
    const cached = entries.get(key);
    if (cached?.version === version) {
      this.#served?.raise(request.workspaceId, committedCount(version));
      return { body: cached.body, length: cached.length, outcome: 'hit' };
    }
    const { value: built, joined } = await this.#builds.share(`${key}\n${version}`, async () => {
      if (!this.#served) return this.#build(key, version, learnt, await build(this.#db));
      // Where replicas answer too, the entry is stored under the version of its own snapshot.
      return this.#db.withConnection(async (connection) => {
        const exact = await inVersionSnapshot(connection, request.workspaceId, () => build(onConnection(connection)));
        if (exact.version === null) return { body: exact.value, length: lengthOf(exact.value), stored: false };
        this.#served!.raise(request.workspaceId, committedCount(exact.version));
        return this.#build(key, exact.version, learnt, exact.value);
      });
    });
    return { body: built.body, length: built.length, outcome: !built.stored ? 'bypass' : joined ? 'shared' : 'miss' };
  }

  /** Built in one snapshot with its version, which then raises the served floor (replicas only). */
  async #buildCounted(db: BuildTarget, request: AnswerRequest, build: BuildAnswer): Promise<Buffer[]> {
    if (!this.#served) return build(db);
    return db.withConnection(async (connection) => {
      const exact = await inVersionSnapshot(connection, request.workspaceId, () => build(onConnection(connection)));
      if (exact.version !== null) this.#served!.raise(request.workspaceId, committedCount(exact.version));
      return exact.value;
    });
  }

  /**
   * The answer from one replica connection, or null when the replica is behind what this instance
   * served of the workspace (or what the caller's own version read on the primary saw): the
   * primary answers then. A hit costs the version read; a build runs in one snapshot with the
   * version it is stored under, so the entry's version says exactly how new its data is.
   */
  async #fromReplica(replica: Database, server: string, request: AnswerRequest, build: BuildAnswer): Promise<Answer | null> {
    const ws = request.workspaceId;
    const served = this.#served!;
    const atLeast = () => Math.max(served.floor(ws), request.version ? committedCount(request.version) : 0);
    const entries = this.#entries;
    return replica.withConnection(async (connection) => {
      // Entries per server: versions of two servers never match, so one entry would be rebuilt on each switch.
      const key = `${keyOf(request)}\n${server}`;
      if (entries) {
        const version = await readDataVersion(connection, ws);
        if (version === null || committedCount(version) < atLeast()) return null;
        const cached = entries.get(key);
        if (cached?.version === version) {
          served.raise(ws, committedCount(version));
          return { body: cached.body, length: cached.length, outcome: 'hit' };
        }
      }
      const exact = await inVersionSnapshot(connection, ws, () => build(onConnection(connection)));
      // Checked again at the end: an answer served meanwhile may have raised the floor.
      if (exact.version === null || committedCount(exact.version) < atLeast()) return null;
      served.raise(ws, committedCount(exact.version));
      const body = exact.value;
      if (!entries) return { body, length: lengthOf(body), outcome: 'off' };
      const built = this.#build(key, exact.version, (this.#learnt += 1), body);
      return { body: built.body, length: built.length, outcome: built.stored ? 'miss' : 'bypass' };
    });
  }

  #build(key: string, version: DataVersion, learnt: number, pieces: Buffer[], pieced?: PiecedBody): Built {
    const length = lengthOf(pieces);
    if (length + key.length + (pieced?.indexBytes ?? 0) > this.maxBytes) return { body: pieces, length, stored: false };
    // Kept as built, without a copy of the whole (a /courses of a large workspace is tens of MB);
    // only a piece that shares its memory (Node's 8 KB pool for small buffers) gets memory of its
    // own, so that a cached small answer does not keep a whole slab alive.
    const body = pieces.map((piece) => (piece.byteOffset === 0 && piece.buffer.byteLength === piece.length ? piece : ownCopy(piece)));
    const entries = this.#entries!;
    // A build of an older version that ends late never replaces a newer one.
    const current = entries.peek(key);
    if (current && current.version !== version && current.learnt > learnt) return { body, length, stored: false };
    entries.set(key, { version, learnt, body, length, pieced });
    return { body, length, stored: true };
  }

  /** The workspace's data version as of now (see `#readVersion`), for a caller that needs it itself. */
  readDataVersion(workspaceId: string): Promise<DataVersion | null> {
    return this.#readVersion(workspaceId);
  }

  /**
   * The workspace's data version, read by a statement sent after this call. At most one read per
   * workspace is on the wire: callers share a read that has not been sent yet (it waits for the end
   * of this turn of the event loop, so that the requests read in the same turn join it, then for a
   * pooled connection), and callers who come while one is sent share the next, sent once it has
   * answered; never one already sent, whose snapshot could predate a change committed before they
   * were called. Under load a hit costs a fraction of a statement.
   */
  async #readVersion(workspaceId: string): Promise<DataVersion | null> {
    const read = await this.#versionReads.next(
      workspaceId,
      async (started) => {
        await new Promise((resolve) => setImmediate(resolve));
        return this.#db.withConnection((connection) => {
          // The statement is written to the connection right after: later requests share the next read.
          started();
          return readDataVersion(connection, workspaceId);
        });
      },
      // A read the database did not answer fails the requests that waited for it to end too: a
      // silent database answers them 503 within its bound, not within twice that.
      isDatabaseUnavailable,
    );
    return read.value;
  }
}
