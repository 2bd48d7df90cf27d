import { openDatabase, openPoolBeside, type Database, type DatabaseOptions, type PoolShare } from './database.ts';

/** What `/readyz` and the log say of one replica. */
export type ReplicaState = 'ok' | 'lagging' | 'down';

export interface ReplicaStatus {
  /** Its place in `DATABASE_REPLICA_URL`, from 1: never its address, which /readyz would reveal. */
  replica: number;
  state: ReplicaState;
}

export interface ReplicaSetOptions {
  primary: Database;
  urls: readonly string[];
  /** A replica known to hold every change committed this long ago takes reads; others are skipped. */
  maxLagMs: number;
  /** How a replica's pool is opened (pool size, timeout, prepared statements). */
  open: Omit<DatabaseOptions, 'url' | 'directUrl'>;
  /** Pools of their own beside each replica's, by name (internal GraphQL's bulkhead): `reader().shares`. */
  shares?: Readonly<Record<string, PoolShare>>;
  /** `cause`: why a replica is `down` (the failed query's error, or that it left recovery). */
  onChange?: (status: ReplicaStatus, cause?: unknown) => void;
}

/** Where the primary's WAL stood at a moment: everything committed before `at` lies at or below `lsn`. */
interface WalSample {
  at: number;
  lsn: bigint;
}

interface Replica {
  readonly index: number;
  readonly url: string;
  db: Database | null;
  shares: Map<string, Database>;
  /** Every change the primary committed before this time is replayed on the replica. */
  verifiedAt: number;
  state: ReplicaState;
}

const PAGE = 8192n;
const SHORT_PAGE_HEADER = 24n;

/** `16/B374D848` → a number that orders like the position. */
const lsnOf = (text: string): bigint => {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
};

/**
 * The primary's insert position as a replayed position would say it: when the last record ends
 * on a page boundary, the insert position points past the next page's header, where the standby
 * reports the boundary itself; on an idle primary it would never verify otherwise.
 */
const asReplayed = (lsn: bigint): bigint => (lsn % PAGE === SHORT_PAGE_HEADER ? lsn - SHORT_PAGE_HEADER : lsn);

/** A stable spread of strings over the replicas (FNV-1a). */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return hash;
}

const PRIMARY_POSITION = 'SELECT pg_current_wal_lsn()::text AS lsn';
const REPLAYED_POSITION = 'SELECT pg_is_in_recovery() AS standby, pg_last_wal_replay_lsn()::text AS lsn';

/**
 * The streaming replicas reads may go to, and how far each is behind. Every check (a quarter of the
 * bound, at most 250 ms) reads the primary's WAL position, then each replica's replayed position:
 * a replica that has replayed past a position the primary had at time t holds every change
 * committed before t. That needs no writes (no heartbeat table) and reads an idle primary right:
 * its position stands still, so a replica that has caught up stays verified up to the last check.
 * `reader()` hands out a replica only while what it is known to hold is younger than the bound.
 */
export class ReplicaSet {
  readonly #options: ReplicaSetOptions;
  readonly #replicas: Replica[];
  #samples: WalSample[] = [];
  #next = 0;
  #timer: NodeJS.Timeout | null = null;
  #checking: Promise<void> | null = null;
  readonly #inFlight = new Set<Replica>();
  #closed = false;

  constructor(options: ReplicaSetOptions) {
    this.#options = options;
    this.#replicas = options.urls.map((url, i) => ({ index: i + 1, url, db: null, shares: new Map(), verifiedAt: 0, state: 'down' }));
  }

  get intervalMs(): number {
    return Math.max(10, Math.min(250, Math.floor(this.#options.maxLagMs / 4)));
  }

  /** Checks once (the start waits for it, replicas included), then every `intervalMs`. */
  async start(): Promise<void> {
    await this.#round(true);
    this.#timer = setInterval(() => void this.check(), this.intervalMs);
    this.#timer.unref();
  }

  /** The state of every replica, in configuration order. */
  statuses(): ReplicaStatus[] {
    const now = Date.now();
    return this.#replicas.map((replica) => ({ replica: replica.index, state: this.#stateAt(replica, now) }));
  }

  /**
   * A replica that may take a read now, or null: read on the primary. With `affinity` (a
   * workspace) the same one while it keeps up, so that each workspace's cached answers gather on
   * one server; round robin otherwise.
   */
  reader(affinity?: string): { db: Database; shares: ReadonlyMap<string, Database>; replica: number; failed(cause: unknown): void } | null {
    const now = Date.now();
    const count = this.#replicas.length;
    const first = affinity === undefined ? this.#next : hashOf(affinity) % count;
    for (let tried = 0; tried < count; tried += 1) {
      const replica = this.#replicas[(first + tried) % count]!;
      if (replica.db && this.#stateAt(replica, now) === 'ok') {
        if (affinity === undefined) this.#next = (first + tried + 1) % count;
        return { db: replica.db, shares: replica.shares, replica: replica.index, failed: (cause) => this.#mark(replica, 'down', cause) };
      }
    }
    return null;
  }

  #stateAt(replica: Replica, now: number): ReplicaState {
    if (replica.state === 'down') return 'down';
    return now - replica.verifiedAt <= this.#options.maxLagMs ? 'ok' : 'lagging';
  }

  /**
   * One round: the primary's position, then every replica's. Rounds never overlap, and a replica
   * still answering the previous round (an unreachable host waits for its connection timeout) is
   * left to it: it ages towards `lagging` while the others are checked on time.
   */
  check(): Promise<void> {
    this.#checking ??= this.#round(false).finally(() => (this.#checking = null));
    return this.#checking;
  }

  async #round(waitForReplicas: boolean): Promise<void> {
    const at = Date.now();
    try {
      const row = (await this.#options.primary.query<{ lsn: string }>(PRIMARY_POSITION)).rows[0]!;
      this.#samples.push({ at, lsn: asReplayed(lsnOf(row.lsn)) });
    } catch {
      // Without the primary's position nothing new is verified; replicas age towards `lagging`.
    }
    // Samples older than twice the bound can no longer make a replica `ok`.
    const horizon = Date.now() - 2 * this.#options.maxLagMs - this.intervalMs;
    while (this.#samples.length > 1 && this.#samples[0]!.at < horizon) this.#samples.shift();
    const checks = this.#replicas
      .filter((replica) => !this.#inFlight.has(replica))
      .map((replica) => {
        this.#inFlight.add(replica);
        return this.#checkReplica(replica).finally(() => this.#inFlight.delete(replica));
      });
    if (waitForReplicas) await Promise.all(checks);
  }

  async #checkReplica(replica: Replica): Promise<void> {
    if (this.#closed) return;
    try {
      replica.db ??= await openDatabase({ ...this.#options.open, url: replica.url });
      for (const [name, share] of Object.entries(this.#options.shares ?? {})) {
        if (!replica.shares.has(name)) replica.shares.set(name, await openPoolBeside(replica.db, share));
      }
      if (this.#closed) return;
      const row = (await replica.db.query<{ standby: boolean; lsn: string | null }>(REPLAYED_POSITION)).rows[0]!;
      // A server out of recovery (promoted, or not a standby at all) no longer follows the primary.
      if (!row.standby || row.lsn === null) return this.#mark(replica, 'down', new Error('not a standby in recovery'));
      const replayed = lsnOf(row.lsn);
      for (let i = this.#samples.length - 1; i >= 0; i -= 1) {
        const sample = this.#samples[i]!;
        if (sample.lsn <= replayed) {
          replica.verifiedAt = Math.max(replica.verifiedAt, sample.at);
          break;
        }
      }
      this.#mark(replica, Date.now() - replica.verifiedAt <= this.#options.maxLagMs ? 'ok' : 'lagging');
    } catch (error) {
      this.#mark(replica, 'down', error);
    }
  }

  #mark(replica: Replica, state: ReplicaState, cause?: unknown): void {
    if (replica.state === state) return;
    replica.state = state;
    this.#options.onChange?.({ replica: replica.index, state }, cause);
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#checking?.catch(() => {});
    while (this.#inFlight.size > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await Promise.all(this.#replicas.flatMap((replica) => [replica.db?.close(), ...[...replica.shares.values()].map((share) => share.close())]));
  }
}
