import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../src/auth/api-key-store.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { forgedApiKey } from '../support/forged-credentials.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';

describeOnEachDatabase('failures on %s', (target) => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase(target);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('http.internal-error: an unexpected failure gets 500 internal_error with a generic message: no stack, no SQL, no internal id', async () => {
    const ws = await seedWorkspace(db, contractFixture('Broken', 1));
    const api = await startTestApi(db);
    try {
      await db.query('ALTER TABLE course_templates RENAME COLUMN description TO description_moved');
      const response = await api.call(COURSES, { key: ws.fullKey });
      expect(response.status).toBe(500);
      expect(response.body).toEqual({ error: { code: 'internal_error', message: 'An unexpected error occurred.' } });
      expect(response.text).not.toMatch(/SELECT|description_moved|course_templates|at .*\.ts|ws_|run_/);
    } finally {
      await db.query('ALTER TABLE course_templates RENAME COLUMN description_moved TO description');
      await api.close();
    }
  });

  it('auth.revocation: revocation takes effect on every instance within 1 second', async () => {
    const ws = await seedWorkspace(db, contractFixture('Two instances', 1));
    // The key cache of the default configuration; the polling below must not trip the rate limit.
    const first = await startTestApi(db, { KEY_CACHE_TTL_MS: '500', RATE_LIMIT_MAX: '100000' });
    const second = await startTestApi(db, { KEY_CACHE_TTL_MS: '500', RATE_LIMIT_MAX: '100000' });
    try {
      expect((await second.call(COURSES, { key: ws.fullKey })).status).toBe(200);
      const id = (await db.query<{ id: string }>('SELECT id FROM api_keys WHERE last4 = $1', [ws.fullKey.slice(-4)])).rows[0]!.id;
      const revokedAt = Date.now();
      await revokeApiKey(db, id);
      let status = 200;
      while (status === 200 && Date.now() - revokedAt < 2000) {
        status = (await second.call(COURSES, { key: ws.fullKey })).status;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(status).toBe(401);
      expect(Date.now() - revokedAt).toBeLessThan(1000);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('database unavailable', () => {
  let api: TestApi;
  let unreachable: Database;

  beforeAll(async () => {
    unreachable = await openDatabase({ url: 'postgresql://postgres@127.0.0.1:9/none', connectionTimeoutMs: 500 });
    api = await startTestApi(unreachable);
  });
  afterAll(async () => {
    await api?.close();
    await unreachable?.close();
  });

  it('http.unavailable: an unreachable database gets 503 service_unavailable with Retry-After in the error shape', async () => {
    const response = await api.call(COURSES, { key: forgedApiKey() });
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ error: { code: 'service_unavailable', message: expect.any(String) } });
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  });
});
