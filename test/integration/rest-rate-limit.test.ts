import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { databaseTargets, openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace } from '../support/seed.ts';

const COURSES = '/api/public/v1/courses';
const BOOKINGS = '/api/public/v1/bookings';

const stores = ['memory', 'postgres', ...(process.env.REDIS_URL ? ['redis'] : [])];
const cases = databaseTargets().flatMap((target) => stores.map((store) => [target, store] as const));

describe.each(cases)('rate limit on %s with the %s store', (target, store) => {
  let db: Database;
  let api: TestApi;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    api = await startTestApi(db, { RATE_LIMIT_STORE: store, ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}) });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('contract 7 rule 1 and 8: the 121st request inside 60 s gets 429 rate_limit_exceeded with Retry-After: 60; another key is unaffected', async () => {
    const ws = await seedWorkspace(db, contractFixture(`Limit ${store}`, 2));
    // Both endpoints count toward the same limit, and so do 403 and 400 answers to a valid key.
    for (let i = 0; i < 120; i += 1) {
      const path = i % 3 === 0 ? BOOKINGS : i % 3 === 1 ? COURSES : `${COURSES}?page=2`;
      const response = await api.call(path, { key: ws.coursesOnlyKey });
      expect(response.status, `request ${i + 1}`).toBe(i % 3 === 0 ? 403 : i % 3 === 1 ? 200 : 400);
      expect(response.headers.ratelimit).toMatch(new RegExp(`^"default";r=${119 - i};t=\\d+$`));
    }
    const limited = await api.call(COURSES, { key: ws.coursesOnlyKey });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: { code: 'rate_limit_exceeded', message: expect.any(String) } });
    expect(limited.headers['retry-after']).toBe('60');
    expect(limited.headers['ratelimit-policy']).toBe('"default";q=120;w=60');
    expect(limited.headers.ratelimit).toMatch(/^"default";r=0;t=([1-9]|[1-5]\d|60)$/);
    const head = await api.call(COURSES, { key: ws.coursesOnlyKey, method: 'HEAD' });
    expect(head.status).toBe(429);
    expect(head.headers['retry-after']).toBe('60');

    const other = await api.call(COURSES, { key: ws.fullKey });
    expect(other.status).toBe(200);
    expect(other.headers.ratelimit).toMatch(/^"default";r=119;t=\d+$/);
  });

  it('decisions HTTP: every response to a valid key carries RateLimit-Policy and RateLimit', async () => {
    const ws = await seedWorkspace(db, contractFixture(`Headers ${store}`, 1));
    for (const [path, key, status] of [
      [COURSES, ws.fullKey, 200],
      [BOOKINGS, ws.coursesOnlyKey, 403],
      [`${BOOKINGS}?x`, ws.fullKey, 400],
    ] as const) {
      const response = await api.call(path, { key });
      expect(response.status).toBe(status);
      expect(response.headers['ratelimit-policy']).toBe('"default";q=120;w=60');
      expect(response.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
    }
  });
});

describe.each(databaseTargets())('authentication limit on %s', (target) => {
  let db: Database;
  let api: TestApi;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    api = await startTestApi(db, { AUTH_FAILURE_LIMIT: '5', AUTH_FAILURE_WINDOW_S: '60' });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('contract 8: failed authentications are limited per client address, separately from the per-key limit', async () => {
    const ws = await seedWorkspace(db, contractFixture('Auth limit', 1));
    for (let i = 0; i < 5; i += 1) {
      const response = await api.call(COURSES, { headers: [['Authorization', 'Bearer wrong']] });
      expect(response.status).toBe(401);
      expect(response.headers).not.toHaveProperty('ratelimit');
    }
    const blocked = await api.call(COURSES, { headers: [['Authorization', 'Bearer wrong']] });
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual({ error: { code: 'rate_limit_exceeded', message: expect.any(String) } });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // A valid key from the same address is still served, with its own full budget.
    const valid = await api.call(COURSES, { key: ws.fullKey });
    expect(valid.status).toBe(200);
    expect(valid.headers.ratelimit).toMatch(/^"default";r=119;/);
  });
});
