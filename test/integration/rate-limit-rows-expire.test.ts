import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { rawRequest } from '../support/http.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

describeOnEachDatabase('the postgres rate-limit store on %s', (target) => {
  let db: Database;
  let api: TestApi;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    api = await startTestApi(db, {
      RATE_LIMIT_STORE: 'postgres',
      TRUST_PROXY: 'loopback',
      AUTH_FAILURE_WINDOW_S: '1',
      RATE_LIMIT_WINDOW_S: '1',
      RATE_LIMIT_CLEANUP_INTERVAL_S: '1',
    });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  const rows = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM rate_limits')).rows[0]!.n;

  it('1,000 distinct client addresses and a key leave no row behind once their windows end', async () => {
    const ws = await seedWorkspace(db, contractFixture('Expiring', 1));
    const statements = await captureStatements(db, async () => {
      for (let batch = 0; batch < 20; batch += 1) {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => rawRequest(api.url, '/api/public/v1/courses', { headers: [['X-Forwarded-For', `203.0.${batch}.${i + 1}`]] })),
        );
      }
      expect((await rawRequest(api.url, '/api/public/v1/courses', { headers: [['Authorization', `Bearer ${ws.fullKey}`]] })).status).toBe(200);
    });
    // One row per address (and one for the key) was written...
    expect(statements.filter((text) => /INSERT INTO "rate_limits"/.test(text))).toHaveLength(1001);
    // ...and every one is deleted soon after its one-second window ended.
    await expect.poll(rows, { timeout: 5000, interval: 200 }).toBe(0);
  });
});
