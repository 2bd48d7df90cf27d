import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { revokeApiKey } from '../../src/auth/api-key-store.ts';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { forgedApiKey, guessedFeedToken } from '../support/forged-credentials.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { DATABASE_TARGETS, LIMITER_STORES, describeOnEachStore } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const LIMIT = 30;
const stores = LIMITER_STORES;

// Each run's addresses are new: counters in a shared Redis outlive a run.
const run = randomBytes(2).toString('hex');
let clients = 0;
/** A client address of its own (the test server trusts the loopback proxy that names it). */
const nextClient = () => `2001:db8:${run}:${(clients += 1).toString(16)}::5`;

/** Runs `count` calls of `send`, `concurrency` at a time; the statuses in the order sent. */
async function flood(count: number, concurrency: number, send: (i: number) => Promise<number>): Promise<number[]> {
  const statuses: number[] = new Array<number>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        statuses[i] = await send(i);
      }
    }),
  );
  return statuses;
}

describeOnEachStore(DATABASE_TARGETS, stores, 'an address shared with a client that keeps failing, on %s with the %s rate-limit store', (target, store) => {
  let db: Database;
  let ws: SeededWorkspace;
  let revokedKey: string;
  const storeEnv = { RATE_LIMIT_STORE: store, ...(store === 'redis' ? { REDIS_URL: process.env.REDIS_URL! } : {}) };
  const env = { ...storeEnv, TRUST_PROXY: 'loopback', KEY_CACHE_TTL_MS: '500', AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW_S: '60', WEBHOOK_WORKER: 'false' };
  const opened: TestApi[] = [];
  const start = async () => {
    const api = await startTestApi(db, env);
    opened.push(api);
    return api;
  };

  const withKey = (api: TestApi, client: string, key: string) =>
    api.call(COURSES, { headers: [['X-Forwarded-For', client], ['Authorization', `Bearer ${key}`]] });
  const feed = (api: TestApi, client: string, token: string) =>
    api.call(`/api/calendar/v1/${token}.ics`, { headers: [['X-Forwarded-For', client]] });
  const newKey = async () =>
    (await cliOn(db).json<{ key: string }>('key', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--scopes', 'courses:read')).key;
  const newFeedToken = async () =>
    (await cliOn(db).json<{ token: string }>('feed', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL)).token;

  /** Forged keys, guessed feed tokens and a revoked key, in turn, from one address. */
  const attack = (api: TestApi, client: string, count: number) =>
    flood(count, 10, async (i) => {
      if (i % 3 === 0) return (await withKey(api, client, forgedApiKey())).status;
      if (i % 3 === 1) return (await feed(api, client, guessedFeedToken())).status;
      return (await withKey(api, client, revokedKey)).status;
    });

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture(`Shared address ${store}`, 1));
    revokedKey = await newKey();
    const id = (await db.query<{ id: string }>('SELECT id FROM api_keys WHERE last4 = $1', [revokedKey.slice(-4)])).rows[0]!.id;
    await revokeApiKey(db, id);
  });
  afterAll(async () => {
    for (const api of opened) await api.close();
    await db?.close();
  });

  it('limits.auth-failures: after 1,000 failures from one address, a valid key and a valid feed token this instance never saw get 200 from that address, and the failures cost at most 40 statements', async () => {
    const api = await start();
    const client = nextClient();
    let statuses: number[] = [];
    const statements = await captureStatements(db, async () => {
      statuses = await attack(api, client, 1000);
    });
    // 401 and 404 while the address is under its limit, 429 past it; nothing else.
    expect(statuses.every((status) => status === 401 || status === 404 || status === 429)).toBe(true);
    expect(statuses.filter((status) => status !== 429).length).toBeLessThanOrEqual(LIMIT);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(1000 - LIMIT);
    expect(statements.length).toBeLessThanOrEqual(40);

    const [key, token] = [await newKey(), await newFeedToken()];
    expect((await withKey(api, client, key)).status).toBe(200);
    expect((await feed(api, client, token)).status).toBe(200);
    // The address is still over its limit for anything else.
    expect((await withKey(api, client, forgedApiKey())).status).toBe(429);
    expect((await feed(api, client, guessedFeedToken())).status).toBe(429);
  });

  it('limits.auth-failures: right after a restart and on a second instance, with the failures going on, valid credentials those instances never saw get 200 from that address', async () => {
    const client = nextClient();
    const first = await start();
    await attack(first, client, 200);
    await first.close();
    const restarted = await start();
    const second = await start();
    for (const api of [restarted, second]) {
      const statuses = await attack(api, client, 100);
      expect(statuses.at(-1)).toBe(429);
      const [key, token] = [await newKey(), await newFeedToken()];
      expect((await withKey(api, client, key)).status).toBe(200);
      expect((await feed(api, client, token)).status).toBe(200);
      // Seen before by another instance only.
      expect((await withKey(api, client, ws.coursesOnlyKey)).status).toBe(200);
    }
  });
});
