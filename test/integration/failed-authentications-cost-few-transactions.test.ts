import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { revokeApiKey } from '../../src/auth/api-key-store.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { forgedApiKey, guessedFeedToken } from '../support/forged-credentials.ts';
import { startTestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace } from '../support/seed.ts';
import { describeOnEachStore } from '../support/variants.ts';

const adminUrl = process.env.DATABASE_URL;
const run = randomBytes(2).toString('hex');

/**
 * PostgreSQL's own count of the transactions of one database. A backend reports its counts when it
 * ends (or now and then while busy), so every pool on the database is closed before reading, and
 * the reading waits until the count stands still.
 */
async function transactionsOf(admin: pg.Client, name: string): Promise<number> {
  const read = async () => {
    await admin.query('SELECT pg_stat_clear_snapshot()');
    const found = await admin.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [name]);
    return Number(found.rows[0]?.n ?? 0);
  };
  let last = await read();
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = await read();
    if (now === last) return now;
    last = now;
  }
}

describeOnEachStore(['postgres'], ['postgres', 'redis'], '1,000 failed authentications from one address on %s, with the %s rate-limit store', (_target, store) => {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const url = adminUrl ? Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString() : '';
  const admin = new pg.Client({ connectionString: adminUrl });
  let revokedKey = '';

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const setup = await openDatabase({ url });
    await migrate(setup);
    const ws = await seedWorkspace(setup, contractFixture(`Transactions ${store}`, 1));
    revokedKey = ws.bookingsOnlyKey;
    const id = (await setup.query<{ id: string }>('SELECT id FROM api_keys WHERE last4 = $1', [revokedKey.slice(-4)])).rows[0]!.id;
    await revokeApiKey(setup, id);
    await setup.close();
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  /** The transactions of starting an instance, running `work` against it and stopping it. */
  async function transactionsAround(work: (call: (path: string, key?: string) => Promise<number>) => Promise<void>): Promise<number> {
    const before = await transactionsOf(admin, name);
    const db = await openDatabase({ url });
    const api = await startTestApi(db, {
      RATE_LIMIT_STORE: store,
      ...(store === 'redis' ? { REDIS_URL: process.env.REDIS_URL! } : {}),
      TRUST_PROXY: 'loopback',
      KEY_CACHE_TTL_MS: '500',
      WEBHOOK_WORKER: 'false',
    });
    const client = `2001:db8:${run}:${store === 'redis' ? 'e' : 'f'}::1`;
    try {
      await work(async (path, key) => {
        const headers: Array<[string, string]> = [['X-Forwarded-For', client]];
        if (key) headers.push(['Authorization', `Bearer ${key}`]);
        return (await api.call(path, { headers })).status;
      });
    } finally {
      await api.close();
      await db.close();
    }
    return (await transactionsOf(admin, name)) - before;
  }

  it('limits.auth-failures: forged keys, guessed feed tokens and a revoked key, 1,000 in all, cost at most 40 transactions in pg_stat_database', async () => {
    const idle = await transactionsAround(async () => {});
    const statuses: number[] = [];
    const attacked = await transactionsAround(async (call) => {
      for (let i = 0; i < 1000; i += 1) {
        if (i % 3 === 0) statuses.push(await call('/api/public/v1/courses', forgedApiKey()));
        else if (i % 3 === 1) statuses.push(await call(`/api/calendar/v1/${guessedFeedToken()}.ics`));
        else statuses.push(await call('/api/public/v1/courses', revokedKey));
      }
    });
    expect(statuses.every((status) => [401, 404, 429].includes(status))).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    expect(attacked - idle).toBeLessThanOrEqual(40);
  });
});
