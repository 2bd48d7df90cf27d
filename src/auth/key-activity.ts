import type { Database } from '../db/database.ts';
import { isDatabaseUnavailable } from '../errors.ts';
import type { Logger, Redactor } from '../logger.ts';
import { clientNetwork } from '../rate-limit/client-address.ts';
import type { ActiveApiKey } from './api-key-store.ts';
import { addUsage, claimExpiryWarnings, DAY_MS, deleteOldActivity, recordLastUses, writeRequestRows, type RequestRow, type UsageCounts } from './key-activity-store.ts';

export interface KeyActivityOptions {
  db: Database;
  logger: Logger;
  /** Cleans what a log row keeps of the path, as the request log line does. */
  redactor: Redactor;
  /** Whether the request log and the daily counts are kept (`KEY_REQUEST_LOG`); last use is recorded either way. */
  log: boolean;
  /** How often collected rows, counts and last uses are written, each kind in one statement. */
  flushMs: number;
  /** Rows kept per key and second; further requests of that second are counted, not logged. */
  rowsPerSecond: number;
  /** The size of each key's ring of rows. */
  maxRows: number;
  retentionMs: number;
  /** How many days daily counts are kept. */
  usageDays: number;
  /** A key's last use is written at most once per this many seconds, across instances. */
  lastUsedIntervalS: number;
  /** Rows waiting for a write, at most; more are dropped (and counted) while the database does not take them. */
  maxPendingRows?: number;
}

/** What the request path tells of one request that carried a valid key (the public pipeline's request state is one). */
export interface KeyedRequest {
  readonly requestId: string;
  /** `performance.now()` when it arrived. */
  readonly startedAt: number;
  readonly errorCode: string | null;
  readonly cache: string | null;
  readonly req: { readonly method: string; readonly originalUrl: string; readonly ip?: string | undefined };
}

/** What this process collected of one key since the last write. */
class KeyEntry {
  usedAt = 0;
  network: string | null = null;
  useToWrite = false;
  /** When this process last sent the key's last use (ms, its clock). */
  sentAt = Number.NEGATIVE_INFINITY;
  second = -1;
  sampled = 0;
  day = -1;
  counted = false;
  s2xx = 0;
  s3xx = 0;
  s4xx = 0;
  s5xx = 0;
  rateLimited = 0;
  notLogged = 0;
}

const EXPIRY_CHECK_MS = 10 * 60_000;
/** `performance.timeOrigin`, read once: the getter costs a few tens of nanoseconds per call. */
const TIME_ORIGIN = performance.timeOrigin;
const WARN_WINDOW_MS = 7 * DAY_MS;

/**
 * Keys' last use, request log and daily counts, collected on the request path in memory (a map
 * lookup and a few counts per request; the row itself only for the first `rowsPerSecond` requests
 * of a key in each second) and written off it, in batches: at most one statement of each kind per
 * flush, whatever the traffic. Also warns of used keys that expire soon.
 */
export class KeyActivity {
  readonly #options: Required<KeyActivityOptions>;
  readonly #keys = new Map<string, KeyEntry>();
  #rows: RequestRow[] = [];
  /** Counts of days that ended while collected, waiting for a write. */
  #closedDays: UsageCounts[] = [];
  #flushing: Promise<void> | null = null;
  #expiryCheck: Promise<void> | null = null;
  readonly #timers: NodeJS.Timeout[] = [];
  /** Rows written, requests not logged (beyond the per-second rows), rows lost (buffer full, failed write). */
  written = 0;
  notLogged = 0;
  dropped = 0;
  /** Active keys used in the last day that expire within 7 days, as last checked. */
  expiringSoon = 0;

  constructor(options: KeyActivityOptions) {
    this.#options = { maxPendingRows: 100_000, ...options };
  }

  /** Starts the periodic writes, the log's retention and the expiry check, after a first expiry check. */
  async start(): Promise<void> {
    const { flushMs, retentionMs, logger } = this.#options;
    const every = (ms: number, work: () => Promise<unknown>, what: string) => {
      const timer = setInterval(() => void work().catch((error: unknown) => logger.warn({ err: error }, what)), ms);
      timer.unref();
      this.#timers.push(timer);
    };
    if (flushMs > 0) every(flushMs, () => this.flush(), 'writing API key activity failed');
    every(Math.min(3_600_000, Math.max(250, Math.floor(retentionMs / 4))), () => this.deleteOld(), 'deleting old API key activity failed');
    every(EXPIRY_CHECK_MS, () => this.checkExpiry(), 'checking API key expiry failed');
    await this.checkExpiry().catch((error: unknown) => logger.warn({ err: error }, 'checking API key expiry failed'));
  }

  /** Counts one request of a valid key, once its answer has been handed to Node. */
  record(key: ActiveApiKey, request: KeyedRequest, status: number, durationMs: number): void {
    const at = TIME_ORIGIN + request.startedAt;
    let entry = this.#keys.get(key.id);
    if (entry === undefined) {
      entry = new KeyEntry();
      this.#keys.set(key.id, entry);
    }
    entry.usedAt = at;
    entry.useToWrite = true;
    const second = Math.floor(at / 1000);
    if (second !== entry.second) {
      entry.second = second;
      entry.sampled = 0;
    }
    const options = this.#options;
    if (!options.log) {
      // The network of a key's last use: taken once per second, which is all a last use shows.
      if (entry.sampled++ === 0) entry.network = clientNetwork(request.req.ip);
      return;
    }
    const day = Math.floor(at / DAY_MS);
    if (day !== entry.day) {
      if (entry.counted) this.#closeDay(key.id, entry);
      entry.day = day;
    }
    entry.counted = true;
    if (status < 300) entry.s2xx += 1;
    else if (status < 400) entry.s3xx += 1;
    else if (status < 500) {
      entry.s4xx += 1;
      if (status === 429) entry.rateLimited += 1;
    } else entry.s5xx += 1;
    if (entry.sampled >= options.rowsPerSecond || this.#rows.length >= options.maxPendingRows) {
      entry.notLogged += 1;
      if (entry.sampled >= options.rowsPerSecond) this.notLogged += 1;
      else this.dropped += 1;
      return;
    }
    entry.sampled += 1;
    const network = clientNetwork(request.req.ip);
    entry.network = network;
    this.#rows.push({
      keyId: key.id,
      at,
      method: request.req.method,
      path: options.redactor.url(request.req.originalUrl).path,
      status,
      errorCode: request.errorCode,
      durationMs: Math.round(durationMs * 100) / 100,
      requestId: request.requestId,
      network,
      cache: request.cache,
    });
  }

  /** Writes what was collected: the rows, the daily counts, the last uses that are due. Concurrent calls share one write. */
  flush(options: { allUses?: boolean } = {}): Promise<void> {
    if (this.#flushing) return this.#flushing;
    const flushing = this.#write(options.allUses ?? false).finally(() => {
      this.#flushing = null;
    });
    this.#flushing = flushing;
    return flushing;
  }

  async #write(allUses: boolean): Promise<void> {
    const { db, logger, maxRows, lastUsedIntervalS } = this.#options;
    const rows = this.#rows;
    this.#rows = [];
    const usage = this.#closedDays;
    this.#closedDays = [];
    const uses: Array<{ keyId: string; at: number; network: string | null }> = [];
    const now = Date.now();
    const intervalMs = lastUsedIntervalS * 1000;
    for (const [keyId, entry] of this.#keys) {
      if (entry.counted) {
        usage.push(this.#counts(keyId, entry));
        entry.counted = false;
      }
      const due = now - entry.sentAt >= intervalMs;
      if (entry.useToWrite && (due || allUses)) {
        uses.push({ keyId, at: entry.usedAt, network: entry.network });
        entry.useToWrite = false;
        entry.sentAt = now;
      } else if (!entry.useToWrite && due && now - entry.usedAt > 2000) {
        this.#keys.delete(keyId);
      }
    }
    const failures: unknown[] = [];
    try {
      this.written += await writeRequestRows(db, rows, maxRows);
    } catch (error) {
      // While the database is away the rows wait for the next write, as many as the buffer holds;
      // a batch it refused for what it holds would be refused again, and is dropped.
      const kept = isDatabaseUnavailable(error) ? [...rows, ...this.#rows] : this.#rows;
      if (!isDatabaseUnavailable(error)) this.dropped += rows.length;
      const over = Math.max(0, kept.length - this.#options.maxPendingRows);
      this.dropped += over;
      this.#rows = kept.slice(over);
      failures.push(error);
    }
    try {
      await addUsage(db, usage);
    } catch (error) {
      // Counts wait for the next write: a day's usage is exact, however long the database was away.
      if (isDatabaseUnavailable(error)) this.#closedDays.push(...usage);
      failures.push(error);
    }
    try {
      const expiring = await recordLastUses(db, uses, lastUsedIntervalS);
      if (expiring.some((key) => key.expiresAt.getTime() - now <= WARN_WINDOW_MS)) void this.checkExpiry().catch((error: unknown) => logger.warn({ err: error }, 'checking API key expiry failed'));
    } catch (error) {
      for (const use of uses) {
        const entry = this.#keys.get(use.keyId);
        if (entry) {
          entry.useToWrite = true;
          entry.sentAt = Number.NEGATIVE_INFINITY;
        }
      }
      failures.push(error);
    }
    if (failures.length > 0) throw failures[0];
  }

  #closeDay(keyId: string, entry: KeyEntry): void {
    this.#closedDays.push(this.#counts(keyId, entry));
    entry.counted = false;
  }

  /** The entry's counts of its day, taken (the entry's are set back to zero). */
  #counts(keyId: string, entry: KeyEntry): UsageCounts {
    const counts = { keyId, day: entry.day, s2xx: entry.s2xx, s3xx: entry.s3xx, s4xx: entry.s4xx, s5xx: entry.s5xx, rateLimited: entry.rateLimited, notLogged: entry.notLogged };
    entry.s2xx = entry.s3xx = entry.s4xx = entry.s5xx = entry.rateLimited = entry.notLogged = 0;
    return counts;
  }

  /** Deletes log rows past their retention and daily counts past theirs. */
  async deleteOld(): Promise<void> {
    const deleted = await deleteOldActivity(this.#options.db, this.#options.retentionMs, this.#options.usageDays);
    if (deleted > 0) this.#options.logger.info({ deleted }, 'API key request log rows deleted after their retention time');
  }

  /**
   * A warning line (once a day per key, whichever instance claims it) for each active key used in
   * the last day that expires within 7 days, and their number for the metric.
   */
  checkExpiry(): Promise<void> {
    this.#expiryCheck ??= (async () => {
      try {
        const found = await claimExpiryWarnings(this.#options.db);
        this.expiringSoon = found.soon;
        for (const key of found.warn) {
          this.#options.logger.warn(
            { keyId: key.id, workspaceId: key.workspaceId, expiresAt: key.expiresAt, lastUsedAt: key.lastUsedAt },
            'API key in use expires within 7 days: rotate it (key rotate --id) before then',
          );
        }
      } finally {
        this.#expiryCheck = null;
      }
    })();
    return this.#expiryCheck;
  }

  /** Stops the timers and writes everything collected, every last use included. */
  async close(): Promise<void> {
    for (const timer of this.#timers.splice(0)) clearInterval(timer);
    await this.#flushing?.catch(() => {});
    await this.flush({ allUses: true }).catch((error: unknown) => this.#options.logger.warn({ err: error }, 'writing API key activity failed'));
  }
}
