import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readIssuerTag } from '../../src/auth/issuer-key-store.ts';
import { generateApiKey, sha256 } from '../../src/auth/secret-format.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { cliOn } from '../support/cli.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { forgedApiKey } from '../support/forged-credentials.ts';
import { LIMITER_STORES, describeOnEachDatabase, describeWhere, missingFor } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const LIMIT = 30;


// Each client is a network of its own, new on every run: counters in a shared Redis outlive a run.
const run = randomBytes(2).toString('hex');
let clients = 0;
/** A client address of its own (the test server trusts the loopback proxy that names it). */
const nextClient = () => `2001:db8:${run}:${(clients += 1).toString(16)}::7`;

describeOnEachDatabase('forged API keys on %s', (target) => {
  let db: Database;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Forged', 1));
  });
  afterAll(async () => {
    await db?.close();
  });

  for (const store of LIMITER_STORES) describeWhere(missingFor(target, store), `with the ${store} rate-limit store`, () => {
    let api: TestApi;

    const from = (client: string, key: string, method = 'GET') =>
      api.call(COURSES, { method, headers: [['X-Forwarded-For', client], ['Authorization', `Bearer ${key}`]] });
    /** Statements of the service's own, without the periodic write of key last-used times. */
    const statementsOf = async (work: () => Promise<unknown>) =>
      (await captureStatements(db, work)).filter((text) => !text.startsWith('UPDATE api_keys k SET last_used_at'));

    beforeAll(async () => {
      api = await startTestApi(db, {
        RATE_LIMIT_STORE: store,
        ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
        TRUST_PROXY: 'loopback',
        KEY_CACHE_TTL_MS: '1000',
        AUTH_FAILURE_LIMIT: String(LIMIT),
        AUTH_FAILURE_WINDOW_S: '60',
      });
    });
    afterAll(async () => {
      await api?.close();
    });

    it('limits.auth-failures: 100 forged well-formed keys from one address get 30 × 401, then 429 with Retry-After, and no key is looked up', async () => {
      const client = nextClient();
      const statuses: number[] = [];
      const underLimit = await statementsOf(async () => {
        for (let i = 0; i < LIMIT; i += 1) statuses.push((await from(client, forgedApiKey())).status);
      });
      expect(statuses).toEqual(Array(LIMIT).fill(401));
      // A key without the issuer tag was never issued: refused in memory. With the postgres store
      // each failure is counted there, until the address reaches its limit.
      expect(underLimit.filter((text) => /key_hash = \$1/.test(text))).toEqual([]);
      expect(underLimit.filter((text) => /rate_limits/.test(text))).toHaveLength(store === 'postgres' ? LIMIT : 0);

      const refused: Array<{ status: number; retryAfter: string | undefined }> = [];
      const overLimit = await statementsOf(async () => {
        for (let i = LIMIT; i < 100; i += 1) {
          const response = await from(client, forgedApiKey());
          refused.push({ status: response.status, retryAfter: response.headers['retry-after'] });
          expect(response.body).toEqual({ error: { code: 'rate_limit_exceeded', message: expect.any(String) } });
        }
      });
      expect(refused.every((answer) => answer.status === 429 && Number(answer.retryAfter) >= 1 && Number(answer.retryAfter) <= 60)).toBe(true);
      expect(overLimit).toEqual([]);
    });

    it('limits.auth-failures: 100 forged keys sent at once from one address get exactly 30 × 401 and cost no key lookup', async () => {
      const client = nextClient();
      let statuses: number[] = [];
      const statements = await statementsOf(async () => {
        statuses = (await Promise.all(Array.from({ length: 100 }, () => from(client, forgedApiKey())))).map((response) => response.status);
      });
      expect(statuses.filter((status) => status === 401)).toHaveLength(LIMIT);
      expect(statuses.filter((status) => status === 429)).toHaveLength(100 - LIMIT);
      expect(statements.filter((text) => /key_hash = \$1/.test(text))).toEqual([]);
      expect(statements.filter((text) => /rate_limits/.test(text))).toHaveLength(store === 'postgres' ? LIMIT : 0);
    });

    it('limits.auth-failures: a burst of 100 concurrent first requests with a valid key uses none of its address\'s budget', async () => {
      const client = nextClient();
      const fresh = await cliOn(db).json<{ key: string }>('key', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--scopes', 'courses:read');
      const burst = await Promise.all(Array.from({ length: 100 }, () => from(client, fresh.key)));
      expect(burst.map((response) => response.status)).toEqual(Array(100).fill(200));
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT + 1; i += 1) statuses.push((await from(client, forgedApiKey())).status);
      expect(statuses).toEqual([...Array(LIMIT).fill(401), 429]);
    });

    it('limits.auth-failures: malformed keys, missing headers and other schemes count too, and past the limit cost nothing either', async () => {
      const client = nextClient();
      const statements = await statementsOf(async () => {
        for (let i = 0; i < LIMIT; i += 1) {
          const header = i % 3 === 0 ? 'Bearer svc_api_short' : i % 3 === 1 ? `Basic ${Buffer.from('a:b').toString('base64')}` : '';
          const response = await api.call(COURSES, { headers: [['X-Forwarded-For', client], ...(header ? [['Authorization', header] as [string, string]] : [])] });
          expect(response.status).toBe(401);
        }
        expect((await from(client, forgedApiKey())).status).toBe(429);
      });
      expect(statements.filter((text) => /key_hash = \$1/.test(text))).toEqual([]);
      if (store !== 'postgres') expect(statements).toEqual([]);
    });

    it('auth.revocation: an issued key not yet stored is remembered briefly, so that repeating it runs one lookup, and works within the key cache time once stored', async () => {
      const client = nextClient();
      const late = generateApiKey(await readIssuerTag(db));
      const started = Date.now();
      const repeated = await statementsOf(async () => {
        for (let i = 0; i < 5; i += 1) expect((await from(client, late)).status).toBe(401);
      });
      expect(repeated.filter((text) => /key_hash = \$1/.test(text))).toHaveLength(1);
      // The key appears as a key created for this workspace would (same row shape as `key create`).
      await db.query(
        `INSERT INTO api_keys (workspace_id, name, scopes, key_hash, last4, created_by, tagged)
         SELECT workspace_id, 'late', scopes, $1, $2, created_by, true FROM api_keys WHERE workspace_id = $3 LIMIT 1`,
        [sha256(late), late.slice(-4), ws.workspaceId],
      );
      // Every 401 on the way counts against the address: ten tries a second stay well below its limit.
      await expect.poll(async () => (await from(client, late)).status, { timeout: 5000, interval: 100 }).toBe(200);
      // KEY_CACHE_TTL_MS is 1000: the failed lookup is trusted no longer than that (some slack for a busy machine).
      expect(Date.now() - started).toBeLessThan(1000 + 750);
    });

    it('limits.auth-failures: an address over its limit still gets 405 first, and every valid key is served from it, seen before or not, while forged ones are refused unseen', async () => {
      const client = nextClient();
      expect((await from(client, ws.fullKey)).status).toBe(200);
      for (let i = 0; i < LIMIT; i += 1) expect((await from(client, forgedApiKey())).status).toBe(401);
      expect((await from(client, forgedApiKey(), 'POST')).status).toBe(405);
      // Found valid before: served, with its own per-key budget.
      const known = await from(client, ws.fullKey);
      expect(known.status).toBe(200);
      expect(known.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
      // Never seen by this instance: issued here, so looked up, and its own answer (a missing scope).
      expect((await from(client, ws.bookingsOnlyKey)).status).toBe(403);
      // A forged key from that address: 429, decided without a statement.
      const statements = await statementsOf(async () => {
        expect((await from(client, forgedApiKey())).status).toBe(429);
      });
      expect(statements).toEqual([]);
      // Another address is not affected.
      expect((await from(nextClient(), forgedApiKey())).status).toBe(401);
    });
  });
});
