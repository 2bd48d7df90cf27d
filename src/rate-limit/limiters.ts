import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Database } from '../db/database.ts';

export type RateLimitStore = 'memory' | 'redis' | 'postgres';

export interface RateLimitOptions {
  store: RateLimitStore;
  /** Requests per window and key (contract: 120 per 60 s). */
  max: number;
  windowSeconds: number;
  /** Failed authentications per window and client address. */
  authFailureMax: number;
  authFailureWindowSeconds: number;
  /** Calendar feed requests per window and feed token. */
  feedMax: number;
  feedWindowSeconds: number;
  redisUrl?: string | undefined;
  db: Database;
}

export interface RateLimitDecision {
  allowed: boolean;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimiters {
  readonly max: number;
  readonly windowSeconds: number;
  /** Counts one request of a valid key. */
  consumeKey(keyId: string): Promise<RateLimitDecision>;
  /** Counts one failed authentication of a client address. */
  consumeAuthFailure(address: string): Promise<RateLimitDecision>;
  /** Counts one calendar feed request of a feed token. */
  consumeFeed(feedId: string): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

export async function createRateLimiters(options: RateLimitOptions): Promise<RateLimiters> {
  const closers: Array<() => Promise<void>> = [];
  const make = await storeFactory(options, closers);
  const perKey = make('rl_key', options.max, options.windowSeconds);
  const authFailures = make('rl_auth', options.authFailureMax, options.authFailureWindowSeconds);
  const feeds = make('rl_feed', options.feedMax, options.feedWindowSeconds);
  return {
    max: options.max,
    windowSeconds: options.windowSeconds,
    consumeKey: (keyId) => consume(perKey, keyId),
    consumeAuthFailure: (address) => consume(authFailures, address),
    consumeFeed: (feedId) => consume(feeds, feedId),
    async close() {
      for (const close of closers) await close();
    },
  };
}

type Factory = (prefix: string, points: number, duration: number) => RateLimiterAbstract;

async function storeFactory(options: RateLimitOptions, closers: Array<() => Promise<void>>): Promise<Factory> {
  switch (options.store) {
    case 'memory':
      return (keyPrefix, points, duration) => new RateLimiterMemory({ keyPrefix, points, duration });
    case 'redis': {
      if (!options.redisUrl) throw new Error('RATE_LIMIT_STORE=redis needs REDIS_URL');
      const { Redis } = await import('ioredis');
      const redis = new Redis(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, lazyConnect: true });
      redis.on('error', () => {});
      await redis.connect();
      closers.push(async () => {
        redis.disconnect();
      });
      // While Redis is unreachable each instance keeps limiting on its own instead of failing requests.
      return (keyPrefix, points, duration) =>
        new RateLimiterRedis({
          storeClient: redis,
          keyPrefix,
          points,
          duration,
          insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration }),
        });
    }
    case 'postgres': {
      // The store names its prepared statements. On the embedded database every connection, of
      // every process, shares one backend where those names would collide: there they go unnamed.
      const pool = options.db.pool;
      const storeClient =
        options.db.kind === 'embedded'
          ? { query: (query: { text: string; values?: unknown[] }) => pool.query({ text: query.text, values: query.values ?? [] }) }
          : pool;
      return (keyPrefix, points, duration) =>
        new RateLimiterPostgres({
          storeClient,
          storeType: 'pool',
          tableName: 'rate_limits',
          tableCreated: true,
          clearExpiredByTimeout: false,
          keyPrefix,
          points,
          duration,
        });
    }
  }
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
