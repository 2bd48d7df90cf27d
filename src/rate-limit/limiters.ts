import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Database } from '../db/database.ts';
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

/**
 * Budgets of points per window and key, kept in the same store as the request limits (the
 * internal GraphQL endpoint's cost budgets per token). Each key's budget is given with every call,
 * so that a changed budget applies to the current window at once.
 */
export interface PointBudgets {
  readonly windowSeconds: number;
  /** Spends `points` of `key`'s `budget`; when they do not fit, the answer is refused and nothing is spent. */
  spend(key: string, points: number, budget: number): Promise<RateLimitDecision>;
  /**
   * Spends `points` more of `key`'s budget in the current window, or gives them back when negative
   * (never below nothing spent): the settlement of a request spent at its estimate.
   */
  adjust(key: string, points: number, budget: number): Promise<RateLimitDecision>;
  /** What is left of `key`'s budget, spending nothing. */
  peek(key: string, budget: number): Promise<RateLimitDecision>;
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
    costs: pointBudgets(make('rl_cost', UNBOUNDED_POINTS, COST_WINDOW_SECONDS), COST_WINDOW_SECONDS),
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
 * Budgets over a limiter that never refuses by itself: the store counts the points spent in the
 * window, the budget given decides. Points that do not fit are given back at once, so that a
 * refused request spends nothing and what is left stays exact.
 */
function pointBudgets(limiter: RateLimiterAbstract, windowSeconds: number): PointBudgets {
  const answer = (budget: number, spent: number, msBeforeNext: number, allowed: boolean): RateLimitDecision => ({
    allowed,
    remaining: Math.max(0, budget - spent),
    resetSeconds: Math.max(0, Math.ceil(msBeforeNext / 1000)),
  });
  return {
    windowSeconds,
    async spend(key, points, budget) {
      const result = await limiter.consume(key, points);
      if (result.consumedPoints <= budget) return answer(budget, result.consumedPoints, result.msBeforeNext, true);
      await limiter.reward(key, points);
      return answer(budget, result.consumedPoints - points, result.msBeforeNext, false);
    },
    async adjust(key, points, budget) {
      if (points === 0) return this.peek(key, budget);
      if (points > 0) {
        const result = await limiter.penalty(key, points);
        return answer(budget, result.consumedPoints, result.msBeforeNext, true);
      }
      // Never more than was spent: a window that ended meanwhile starts at nothing, not below.
      const current = await limiter.get(key);
      const back = Math.min(-points, current?.consumedPoints ?? 0);
      if (back <= 0) return answer(budget, current?.consumedPoints ?? 0, current?.msBeforeNext ?? windowSeconds * 1000, true);
      const result = await limiter.reward(key, back);
      return answer(budget, result.consumedPoints, result.msBeforeNext, true);
    },
    async peek(key, budget) {
      const result = await limiter.get(key);
      return result ? answer(budget, result.consumedPoints, result.msBeforeNext, true) : answer(budget, 0, windowSeconds * 1000, true);
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
