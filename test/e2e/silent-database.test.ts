import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { rawRequest } from '../support/http.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { SilentRelay } from '../support/silent-relay.ts';
import { watchStalls } from '../support/stalls.ts';
import { describeWhere, missingFor } from '../support/variants.ts';

const STATEMENT_TIMEOUT_MS = 1500;
const POOL_SIZE = 3;

describeWhere(missingFor('postgres'), 'a database whose network goes silent', () => {
  let seeded: Database;
  let relay: SilentRelay;
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    seeded = await openTestDatabase('postgres');
    ws = await seedWorkspace(seeded, contractFixture('Silent', 3));
    const direct = new URL(seeded.connectionString);
    relay = await SilentRelay.start({ host: direct.hostname, port: Number(direct.port || 5432) });
    db = await openDatabase({ url: relay.through(seeded.connectionString), poolSize: POOL_SIZE, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
    // The key cache keeps a key for a second: the requests of the first second after the silence
    // begins wait for their data version read, those after it for their key's lookup.
    api = await startTestApi(db, { DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS), KEY_CACHE_TTL_MS: '1000' });
  });
  afterAll(async () => {
    await api?.close();
    relay?.speak();
    await db?.close();
    await relay?.close();
    await seeded?.close();
  });

  it('http.unavailable: requests get 503 with Retry-After within the statement timeout and a second, queued for a connection or not, and 200 again once it answers', async () => {
    // From the request's start to its whole answer, as the client sees it.
    const timed = async (path: string) => {
      const started = performance.now();
      const response = await rawRequest(api.url, path, { headers: [['Authorization', `Bearer ${ws.fullKey}`]] });
      return { status: response.status, retryAfter: response.headers['retry-after'], body: response.body, ms: performance.now() - started };
    };
    expect((await timed('/api/public/v1/bookings')).status).toBe(200);
    expect((await timed('/api/public/v1/courses')).status).toBe(200);

    // On a loaded machine this process may not run for a while; that time is not the service's wait.
    const stalls = watchStalls();
    relay.silence();
    // More requests than the pool has connections, one every 100 ms for two seconds: some wait for a
    // connection while others' statements hang, some for a version read already on its way, some
    // for their key's lookup once the key cache has let the key go.
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const silent = await Promise.all(
      Array.from({ length: 20 }, (_, i) => pause(i * 100).then(() => timed(i % 2 === 0 ? '/api/public/v1/bookings' : '/api/public/v1/courses'))),
    );
    expect(silent.length).toBeGreaterThan(POOL_SIZE);
    for (const answer of silent) {
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({ error: { code: 'service_unavailable', message: expect.any(String) } });
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
      expect(answer.ms, `stalled ${Math.round(stalls.ms)} ms meanwhile`).toBeLessThan(STATEMENT_TIMEOUT_MS + 1000 + stalls.ms);
    }

    relay.speak();
    const answered = await timed('/api/public/v1/bookings');
    stalls.stop();
    expect(answered.status).toBe(200);
    expect(answered.ms, `stalled ${Math.round(stalls.ms)} ms meanwhile`).toBeLessThan(STATEMENT_TIMEOUT_MS + 1000 + stalls.ms);
  });
});
