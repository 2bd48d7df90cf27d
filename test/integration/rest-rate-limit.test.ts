import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace } from '../support/seed.ts';
import { DATABASE_TARGETS, LIMITER_STORES, describeOnEachDatabase, describeOnEachStore } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const BOOKINGS = '/api/public/v1/bookings';

const stores = LIMITER_STORES;

describeOnEachStore(DATABASE_TARGETS, stores, 'rate limit on %s with the %s store', (target, store) => {
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

  it('limits.per-key: the 121st request inside 60 s gets 429 rate_limit_exceeded with Retry-After: 60; another key is unaffected', async () => {
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

  it('limits.what-counts: every request with a valid key counts once, on either endpoint, GET or HEAD, whatever its status; a request without a valid key counts toward no key', async () => {
    const ws = await seedWorkspace(db, contractFixture(`Counts ${store}`, 1));
    const remaining = (response: { headers: Record<string, string> }) => Number(/^"default";r=(\d+);/.exec(response.headers.ratelimit ?? '')?.[1]);
    const steps = [
      { path: COURSES, method: 'GET', status: 200 },
      { path: COURSES, method: 'HEAD', status: 200 },
      { path: BOOKINGS, method: 'GET', status: 403 },
      { path: BOOKINGS, method: 'HEAD', status: 403 },
      { path: `${COURSES}?page=2`, method: 'GET', status: 400 },
      { path: `${COURSES}?page=2`, method: 'HEAD', status: 400 },
    ];
    for (const [index, step] of steps.entries()) {
      const response = await api.call(step.path, { key: ws.coursesOnlyKey, method: step.method });
      expect(response.status, `${step.method} ${step.path}`).toBe(step.status);
      expect(remaining(response), `${step.method} ${step.path}`).toBe(119 - index);
    }
    // Requests without a valid key (none, a wrong one, this key with its last character changed) leave its budget alone.
    const changed = `${ws.coursesOnlyKey.slice(0, -1)}${ws.coursesOnlyKey.endsWith('x') ? 'y' : 'x'}`;
    for (const headers of [[], [['Authorization', 'Bearer wrong']], [['Authorization', `Bearer ${changed}`]]] as Array<Array<[string, string]>>) {
      const refused = await api.call(COURSES, { headers });
      expect(refused.status).toBe(401);
      expect(refused.headers).not.toHaveProperty('ratelimit');
    }
    expect(remaining(await api.call(COURSES, { key: ws.coursesOnlyKey }))).toBe(119 - steps.length);
  });

  it('limits.headers: every response to a valid key carries RateLimit-Policy and RateLimit', async () => {
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

describeOnEachDatabase('authentication limit on %s', (target) => {
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

  it('limits.auth-failures: failed authentications are limited per client address, separately from the per-key limit', async () => {
    const ws = await seedWorkspace(db, contractFixture('Auth limit', 1));
    expect((await api.call(COURSES, { key: ws.fullKey })).status).toBe(200);
    for (let i = 0; i < 5; i += 1) {
      const response = await api.call(COURSES, { headers: [['Authorization', 'Bearer wrong']] });
      expect(response.status).toBe(401);
      expect(response.headers).not.toHaveProperty('ratelimit');
    }
    const blocked = await api.call(COURSES, { headers: [['Authorization', 'Bearer wrong']] });
    expect(blocked.status).toBe(429);
    expect(blocked.body).toEqual({ error: { code: 'rate_limit_exceeded', message: expect.any(String) } });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // A key this instance recently found valid is still served from that address, with its own budget.
    const valid = await api.call(COURSES, { key: ws.fullKey });
    expect(valid.status).toBe(200);
    expect(valid.headers.ratelimit).toMatch(/^"default";r=118;/);
  });
});
