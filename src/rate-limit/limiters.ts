import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Database } from '../db/database.ts';
import type { BudgetState, PointBudgets } from '../graphql/work/budget.ts';
import { MemoryWindows, type RateLimitDecision } from './memory-windows.ts';
import { deleteEndedWindows } from './rate-limit-store.ts';

export type RateLimitStore = 'memory' | 'redis' | 'postgres';

export interface RateLimitOptions {
  store: RateLimitStore;
  /** Requests per window and key (docs/contract-rules.md, limits.per-key: 120 per 60 s). */
  max: number;
  windowSeconds: number;
  /** Failed authentications per window and client address. */
  authFailureMax: number;
  authFailureWindowSeconds: number;
  /** Calendar feed requests per window and feed token. */
  feedMax: number;
  feedWindowSeconds: number;
  /** The integrations page's operations per window and session (120 per 60 s by default). */
  portalMax?: number;
  portalWindowSeconds?: number;
  /** How often the postgres store deletes the rows of windows that have ended. */
  cleanupIntervalSeconds?: number;
  redisUrl?: string | undefined;
  db: Database;
}

export type { RateLimitDecision };

/**
 * The per-address count of failed authentications (API keys and feed tokens alike). Each failure
 * is counted first in this process's memory, which caps what one process writes to the shared
 * store at the limit per window and address; then in the shared store, where every instance sees
 * it. Once the shared count reaches the limit, the store keeps the block in this process's memory
 * too, so further failures of that address cost no store work at all.
 */
export interface FailureLimiter {
  /** Counts a failure of `address` (an `addressKey`); refused when the address is over its limit. */
  failed(address: string): Promise<RateLimitDecision>;
}

export interface RateLimiters {
  readonly max: number;
  readonly windowSeconds: number;
  /** Counts one request of a valid key. */
  consumeKey(keyId: string): Promise<RateLimitDecision>;
  /**
   * The same count, decided at once where the store is this process's memory
   * (`RATE_LIMIT_STORE=memory`): the decision is written into `into`, which is returned. Null
   * where the store is shared: nothing is counted, and the caller awaits `consumeKey`.
   */
  consumeKeyNow(keyId: string, into: RateLimitDecision): RateLimitDecision | null;
  /** Failed authentications and unknown feed tokens, per client address. */
  readonly failures: FailureLimiter;
  /** Counts one calendar feed request of a feed token. */
  consumeFeed(feedId: string): Promise<RateLimitDecision>;
  /** Counts one request of an integrations page's session. */
  consumePortal(sessionId: string): Promise<RateLimitDecision>;
  /** Cost budgets per token and minute of the internal GraphQL endpoint. */
  readonly costs: PointBudgets;
  close(): Promise<void>;
}

/** The store's counter is a PostgreSQL integer; a budget never comes near it. */
const UNBOUNDED_POINTS = 2 ** 31 - 1;
const COST_WINDOW_SECONDS = 60;
/** How long points owed are kept: a day of windows pays far more than one request can owe. */
const OWED_SECONDS = 86_400;

export async function createRateLimiters(options: RateLimitOptions): Promise<RateLimiters> {
  const closers: Array<() => Promise<void>> = [];
  const make = await storeFactory(options, closers);
  // In memory, the windows of keys and feeds are counted in place (src/rate-limit/memory-windows.ts).
  const counter = (prefix: string, points: number, duration: number) => {
    if (options.store !== 'memory') {
      const limiter = make(prefix, points, duration);
      return { windows: null, consume: (key: string) => consume(limiter, key) };
    }
    const windows = new MemoryWindows(points, duration);
    return { windows, consume: (key: string) => Promise.resolve(windows.consume(key, { allowed: false, remaining: 0, resetSeconds: 0 })) };
  };
  const perKey = counter('rl_key', options.max, options.windowSeconds);
  const feeds = counter('rl_feed', options.feedMax, options.feedWindowSeconds);
  const portal = counter('rl_portal', options.portalMax ?? 120, options.portalWindowSeconds ?? 60);
  const localFailures = new RateLimiterMemory({ keyPrefix: 'rl_auth', points: options.authFailureMax, duration: options.authFailureWindowSeconds });
  const sharedFailures =
    options.store === 'memory' ? null : make('rl_auth', options.authFailureMax, options.authFailureWindowSeconds, { inMemoryBlockOnConsumed: options.authFailureMax });
  return {
    max: options.max,
    windowSeconds: options.windowSeconds,
    consumeKey: perKey.consume,
    consumeKeyNow: (keyId, into) => perKey.windows?.consume(keyId, into) ?? null,
    failures: {
      async failed(address) {
        const local = await consume(localFailures, address);
        if (!local.allowed || !sharedFailures) return local;
        // An unreachable store does not turn a failed authentication into an error: the local count stands.
        return consume(sharedFailures, address).catch(() => local);
      },
    },
    consumeFeed: feeds.consume,
    consumePortal: portal.consume,
    costs: pointBudgets(make('rl_cost', UNBOUNDED_POINTS, COST_WINDOW_SECONDS), make('rl_cost_owed', UNBOUNDED_POINTS, OWED_SECONDS), COST_WINDOW_SECONDS),
    async close() {
      for (const close of closers) await close();
    },
  };
}

type Factory = (prefix: string, points: number, duration: number, extra?: { inMemoryBlockOnConsumed?: number }) => RateLimiterAbstract;

async function storeFactory(options: RateLimitOptions, closers: Array<() => Promise<void>>): Promise<Factory> {
  switch (options.store) {
    case 'memory':
      return (keyPrefix, points, duration) => new RateLimiterMemory({ keyPrefix, points, duration });
    case 'redis': {
      if (!options.redisUrl) throw new Error('RATE_LIMIT_STORE=redis needs REDIS_URL');
      const { Redis } = await import('ioredis');
      const redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
      let lastError: unknown;
      redis.on('error', (error: unknown) => (lastError = error));
      await redis.connect().catch((error: unknown) => {
        redis.disconnect();
        // The URL is not repeated: it may hold a password.
        const reason = (lastError as NodeJS.ErrnoException | undefined)?.code ?? (error instanceof Error ? error.message : String(error));
        throw new Error(`RATE_LIMIT_STORE=redis: Redis at REDIS_URL does not accept connections (${reason})`);
      });
      closers.push(async () => {
        redis.disconnect();
      });
      // While Redis is unreachable each instance keeps limiting on its own instead of failing requests.
      return (keyPrefix, points, duration, extra) =>
        new RateLimiterRedis({
          storeClient: redis,
          keyPrefix,
          points,
          duration,
          ...extra,
          insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
        });
    }
    case 'postgres': {
      // Through the database's own statement path, so that its statements are observed and counted
      // like every other (and named statements go unnamed on the embedded database).
      const storeClient = { query: (query: { name?: string; text: string; values?: unknown[] }) => options.db.queryConfig(query) };
      // Rows of ended windows are worth nothing (a new window overwrites them): they are deleted
      // soon after they end, instead of an hour later as the store itself would.
      const cleanup = setInterval(() => void deleteEndedWindows(options.db, Date.now()).catch(() => {}), (options.cleanupIntervalSeconds ?? 60) * 1000);
      cleanup.unref();
      closers.push(async () => clearInterval(cleanup));
      return (keyPrefix, points, duration, extra) =>
        new RateLimiterPostgres({
          storeClient,
          storeType: 'pool',
          tableName: 'rate_limits',
          tableCreated: true,
          clearExpiredByTimeout: false,
          keyPrefix,
          points,
          duration,
          ...extra,
        });
    }
  }
}

/**
 * Budgets over limiters that never refuse by themselves: `window` counts the points spent in the
 * current window, `owed` what requests cost beyond what their window's budget held; the budget
 * given decides. Points that do not fit are given back at once, so that a refused request spends
 * nothing and what is left stays exact. Every step is one atomic change of one counter of the
 * store; where two instances pay the same debt at once, what was paid twice is given back.
 */
function pointBudgets(window: RateLimiterAbstract, owed: RateLimiterAbstract, windowSeconds: number): PointBudgets {
  const state = (allowed: boolean, spent: number, owes: number, msBeforeNext: number): BudgetState => ({ allowed, spent: Math.max(0, spent), owed: Math.max(0, owes), msBeforeNext });
  const read = async (key: string) => {
    const [spent, owes] = await Promise.all([window.get(key), owed.get(key)]);
    return { spent: spent?.consumedPoints ?? 0, msBeforeNext: spent?.msBeforeNext ?? windowSeconds * 1000, owes: Math.max(0, owes?.consumedPoints ?? 0) };
  };
  const owing = async (key: string) => Math.max(0, (await owed.get(key))?.consumedPoints ?? 0);
  /** Moves what `key` owes into its current window, as far as `budget` leaves room. */
  const pay = async (key: string, budget: number) => {
    const now = await read(key);
    const payment = Math.min(now.owes, budget - now.spent);
    if (payment <= 0) return now;
    const charged = await window.penalty(key, payment);
    const left = await owed.reward(key, payment);
    let spent = charged.consumedPoints;
    if (left.consumedPoints < 0) {
      // Paid by another instance at the same time: the excess goes back to the window.
      await owed.penalty(key, -left.consumedPoints);
      spent = (await window.reward(key, -left.consumedPoints)).consumedPoints;
    }
    return { spent, msBeforeNext: charged.msBeforeNext, owes: Math.max(0, left.consumedPoints) };
  };
  return {
    windowSeconds,
    async spend(key, points, budget) {
      // One round trip when nothing is owed, as almost always; else the points go back, what is owed is paid first.
      let [result, owes] = await Promise.all([window.consume(key, points), owing(key)]);
      if (owes > 0) {
        await window.reward(key, points);
        owes = (await pay(key, budget)).owes;
        result = await window.consume(key, points);
      }
      if (result.consumedPoints <= budget) return state(true, result.consumedPoints, owes, result.msBeforeNext);
      await window.reward(key, points);
      return state(false, result.consumedPoints - points, owes, result.msBeforeNext);
    },
    async extend(key, points, ceiling) {
      // What was owed this minute counts: a request settled past the budget does not make room to lend again.
      const [result, owes] = await Promise.all([window.consume(key, points), owing(key)]);
      const over = result.consumedPoints + owes - ceiling;
      // As much as fits: what does not is given back at once.
      if (over > 0) await window.reward(key, Math.min(points, over));
      return Math.max(0, points - Math.max(0, over));
    },
    async adjust(key, points, budget, charged) {
      let result: { consumedPoints: number; msBeforeNext: number };
      if (points > 0) result = await window.penalty(key, points);
      else {
        // Never more than was spent: a window that ended meanwhile starts at nothing, not below.
        const now = await window.get(key);
        const back = Math.min(-points, now?.consumedPoints ?? 0);
        result = back > 0 ? await window.reward(key, back) : { consumedPoints: now?.consumedPoints ?? 0, msBeforeNext: now?.msBeforeNext ?? windowSeconds * 1000 };
      }
      // What the window holds beyond the budget, of this request's charge, is owed to the following ones.
      const beyond = Math.min(charged, result.consumedPoints - budget);
      if (beyond <= 0) return state(true, result.consumedPoints, await owing(key), result.msBeforeNext);
      const kept = await window.reward(key, beyond);
      const owes = await owed.penalty(key, beyond);
      return state(true, kept.consumedPoints, owes.consumedPoints, kept.msBeforeNext);
    },
    async peek(key) {
      const now = await read(key);
      return state(true, now.spent, now.owes, now.msBeforeNext);
    },
  };
}

async function consume(limiter: RateLimiterAbstract, key: string): Promise<RateLimitDecision> {
  try {
    const result = await limiter.consume(key);
    return decision(true, result);
  } catch (rejection) {
    if (rejection instanceof RateLimiterRes) return decision(false, rejection);
    throw rejection;
  }
}

function decision(allowed: boolean, result: RateLimiterRes): RateLimitDecision {
  return {
    allowed,
    remaining: Math.max(0, result.remainingPoints),
    resetSeconds: Math.max(0, Math.ceil(result.msBeforeNext / 1000)),
  };
}
