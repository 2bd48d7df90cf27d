import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgedApiKey, guessedFeedToken } from '../support/forged-credentials.ts';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const LIMIT = 30;
const stores = ['memory', 'postgres'];

const run = randomBytes(2).toString('hex');
let clients = 0;
/** A client address of its own, named by the loopback proxy the test server trusts. */
const nextClient = () => `2001:db8:${run}:${(clients += 1).toString(16)}::9`;

describeOnEachDatabase('guessed calendar feed tokens on %s', (target) => {
  let db: Database;
  let ws: SeededWorkspace;
  let feedPath: string;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Guessed', 1));
    feedPath = (await cliOn(db).json<{ path: string }>('feed', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL)).path;
  });
  afterAll(async () => {
    await db?.close();
  });

  describe.each(stores)('with the %s rate-limit store', (store) => {
    let api: TestApi;

    const get = (client: string, path: string) => api.call(path, { headers: [['X-Forwarded-For', client]] });
    const guess = () => `/api/calendar/v1/${guessedFeedToken()}.ics`;

    beforeAll(async () => {
      api = await startTestApi(db, { RATE_LIMIT_STORE: store, TRUST_PROXY: 'loopback', AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW_S: '60' });
    });
    afterAll(async () => {
      await api?.close();
    });

    it('calendar.not-found: 100 guessed svc_cal_ tokens from one address get 30 × 404, then 429 with Retry-After, and no token is looked up', async () => {
      const client = nextClient();
      const found: number[] = [];
      const underLimit = await captureStatements(db, async () => {
        for (let i = 0; i < LIMIT; i += 1) found.push((await get(client, guess())).status);
      });
      expect(found).toEqual(Array(LIMIT).fill(404));
      // A token without the issuer tag was never issued: refused in memory.
      expect(underLimit.filter((text) => /token_hash = \$1/.test(text))).toEqual([]);

      const overLimit = await captureStatements(db, async () => {
        for (let i = LIMIT; i < 100; i += 1) {
          const response = await get(client, guess());
          expect(response.status).toBe(429);
          expect(response.body).toEqual({ error: { code: 'rate_limit_exceeded', message: expect.any(String) } });
          expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
          expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(60);
        }
      });
      expect(overLimit).toEqual([]);
    });

    it('calendar.not-found: malformed tokens count too; valid feeds, served before or not, still work from the blocked address; others are not affected', async () => {
      const client = nextClient();
      expect((await get(client, feedPath)).status).toBe(200);
      for (let i = 0; i < LIMIT; i += 1) {
        const path = i % 2 === 0 ? '/api/calendar/v1/not-a-token.ics' : `/api/calendar/v1/${guessedFeedToken()}`;
        expect((await get(client, path)).status).toBe(404);
      }
      expect((await get(client, guess())).status).toBe(429);
      expect((await get(client, feedPath)).status).toBe(200);
      const unseen = (await cliOn(db).json<{ path: string }>('feed', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL)).path;
      expect((await get(client, unseen)).status).toBe(200);
      const other = nextClient();
      expect((await get(other, guess())).status).toBe(404);
      expect((await get(other, feedPath)).status).toBe(200);
    });

    it('limits.auth-failures: guessed API keys and guessed feed tokens share one budget per address', async () => {
      const client = nextClient();
      for (let i = 0; i < LIMIT / 2; i += 1) {
        const response = await api.call('/api/public/v1/courses', { headers: [['X-Forwarded-For', client], ['Authorization', `Bearer ${forgedApiKey()}`]] });
        expect(response.status).toBe(401);
      }
      for (let i = 0; i < LIMIT / 2; i += 1) expect((await get(client, guess())).status).toBe(404);
      expect((await get(client, guess())).status).toBe(429);
      const key = await api.call('/api/public/v1/courses', { headers: [['X-Forwarded-For', client], ['Authorization', `Bearer ${forgedApiKey()}`]] });
      expect(key.status).toBe(429);
    });
  });
});
