import { afterAll, beforeAll, expect, it } from 'vitest';
import { forgedApiKey } from '../support/forged-credentials.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { spec } from '../support/openapi.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const BOOKINGS = '/api/public/v1/bookings';
const errorBody = (code: string) => ({ error: { code, message: expect.any(String) } });

describeOnEachDatabase('HTTP surface on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Http', 3));
    api = await startTestApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('http.method-not-allowed: methods other than GET and HEAD get 405 with Allow: GET, HEAD and no authentication needed', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      for (const path of [COURSES, BOOKINGS]) {
        const response = await api.call(path, { method });
        expect(response.status, `${method} ${path}`).toBe(405);
        expect(response.headers.allow).toBe('GET, HEAD');
        expect(response.body).toEqual(errorBody('method_not_allowed'));
      }
    }
  });

  it('http.checks-order: the checks run in the order method, authentication, rate limit, scope, query string', async () => {
    // method before authentication
    expect((await api.call(`${BOOKINGS}?x=1`, { method: 'POST' })).status).toBe(405);
    // authentication before scope and query string
    expect((await api.call(`${BOOKINGS}?x=1`, { headers: [['Authorization', 'Bearer nope']] })).status).toBe(401);
    // scope before query string
    expect((await api.call(`${BOOKINGS}?x=1`, { key: ws.coursesOnlyKey })).status).toBe(403);
    // query string last
    expect((await api.call(`${BOOKINGS}?x=1`, { key: ws.bookingsKey })).status).toBe(400);
  });

  it('http.checks-order: a list route at its exact path and at the trailing-slash spelling the router takes runs the same checks and answers the same', async () => {
    for (const path of [BOOKINGS, `${BOOKINGS}/`]) {
      const post = await api.call(path, { method: 'POST', headers: [['Authorization', 'Bearer nope']] });
      expect(post.status, `POST ${path}`).toBe(405);
      expect((await api.call(path, { headers: [['Authorization', 'Bearer nope']] })).status, path).toBe(401);
      expect((await api.call(path, { key: ws.coursesOnlyKey })).status, path).toBe(403);
      const answered = await api.call(path, { key: ws.bookingsKey });
      expect(answered.status, path).toBe(200);
      expect(answered.headers['cache-control']).toBe('private, no-store');
      expect(answered.headers['x-content-type-options']).toBe('nosniff');
      expect(answered.headers['x-request-id']).toMatch(/^[\w.:-]+$/);
    }
    const [exact, slash] = await Promise.all([api.call(BOOKINGS, { key: ws.bookingsKey }), api.call(`${BOOKINGS}/`, { key: ws.bookingsKey })]);
    expect(slash.body).toEqual(exact.body);
  });

  it('http.no-query: any query string gives 400 invalid_request naming the parameter', async () => {
    for (const [query, name] of [
      ['?limit=5', 'limit'],
      ['?workspace=ws_123', 'workspace'],
      ['?a=1&b=2', 'a'],
      ['?flag', 'flag'],
      ['?caf%C3%A9=1', 'café'],
    ] as const) {
      const response = await api.call(`${COURSES}${query}`, { key: ws.fullKey });
      expect(response.status, query).toBe(400);
      expect(response.body).toEqual(errorBody('invalid_request'));
      expect((response.body as { error: { message: string } }).error.message).toContain(`"${name}"`);
    }
    const bare = await api.call(`${COURSES}?`, { key: ws.fullKey });
    expect(bare.status).toBe(400);
  });

  it('http.no-query: a parameter name holding a secret of any kind, in any letter case or encoding, is named without it', async () => {
    const secrets = [
      ws.fullKey,
      'SVC_API_' + 'A'.repeat(38),
      `svc_int_${'b'.repeat(38)}`,
      `Svc_Int_${'c'.repeat(38)}`,
      `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
      `WHSEC_${Buffer.alloc(32, 9).toString('base64')}`,
      `svc_cal_${'d'.repeat(32)}`,
      INTERNAL_TOKEN,
    ];
    for (const secret of secrets) {
      for (const spelled of [secret, encodeURIComponent(secret), secret.replace(/^./, (first) => `%25${first.charCodeAt(0).toString(16)}`)]) {
        const response = await api.call(`${COURSES}?${spelled}=1`, { key: ws.fullKey });
        expect(response.status).toBe(400);
        const message = (response.body as { error: { message: string } }).error.message;
        expect(message, spelled).toContain('[redacted]');
        for (const part of [secret, secret.slice(8, 30), secret.slice(-12)]) expect(message.toLowerCase(), spelled).not.toContain(part.toLowerCase());
      }
    }
  });

  it('http.no-body: the request body is never read or parsed', async () => {
    const response = await api.call(COURSES, {
      key: ws.fullKey,
      headers: [['Content-Type', 'application/json']],
      body: '{"this is": not json',
    });
    expect(response.status).toBe(200);
  });

  it('http.not-found: an unknown path under /api/ gets 404 not_found in the error shape', async () => {
    for (const path of ['/api/public/v1/nothing', '/api/public/v2/courses', '/api/', '/api/public/v1/courses/extra', '/API/PUBLIC/V1/COURSES']) {
      const response = await api.call(path, { key: ws.fullKey });
      expect(response.status, path).toBe(404);
      expect(response.body).toEqual(errorBody('not_found'));
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    }
  });

  it('http.content-type: every JSON response, errors included, is application/json; charset=utf-8 with the security headers and no X-Powered-By', async () => {
    const responses = [
      await api.call(COURSES, { key: ws.fullKey }),
      await api.call(COURSES),
      await api.call(BOOKINGS, { key: ws.coursesOnlyKey }),
      await api.call(COURSES, { method: 'DELETE' }),
      await api.call('/api/nope'),
      await api.call(`${COURSES}?q=1`, { key: ws.fullKey }),
    ];
    for (const response of responses) {
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers).not.toHaveProperty('x-powered-by');
      expect(response.headers).not.toHaveProperty('access-control-allow-origin');
    }
  });

  it('http.no-cors: a preflight gets no Access-Control headers', async () => {
    const response = await api.call(COURSES, {
      method: 'OPTIONS',
      headers: [['Origin', 'https://evil.example'], ['Access-Control-Request-Method', 'GET']],
    });
    expect(response.status).toBe(405);
    expect(Object.keys(response.headers).filter((name) => name.startsWith('access-control'))).toEqual([]);
  });

  it('http.security-headers: every answer of the public listener, API errors, the feed, the OpenAPI document, /docs and /healthz included, carries nosniff and no-referrer and no X-Powered-By', async () => {
    const responses = [
      await api.call(COURSES, { key: ws.fullKey }),
      await api.call(BOOKINGS, { key: ws.fullKey, method: 'HEAD' }),
      await api.call(BOOKINGS, { headers: [['Authorization', 'Bearer nope']] }),
      await api.call(BOOKINGS, { key: ws.coursesOnlyKey }),
      await api.call(COURSES, { method: 'PUT' }),
      await api.call('/api/calendar/v1/svc_cal_unknown.ics'),
      await api.call('/openapi/public-v1.yaml'),
      await api.call('/docs'),
      await api.call('/healthz'),
      await api.call('/nothing-here'),
    ];
    for (const response of responses) {
      expect(response.headers['x-content-type-options'], `${response.status}`).toBe('nosniff');
      expect(response.headers['referrer-policy'], `${response.status}`).toBe('no-referrer');
      expect(response.headers).not.toHaveProperty('x-powered-by');
    }
  });

  it('http.cache-control: both endpoints send Cache-Control: private, no-store on GET and HEAD, and so do their errors', async () => {
    const responses = [
      [200, await api.call(COURSES, { key: ws.fullKey })],
      [200, await api.call(COURSES, { key: ws.fullKey, method: 'HEAD' })],
      [200, await api.call(BOOKINGS, { key: ws.fullKey })],
      [200, await api.call(BOOKINGS, { key: ws.fullKey, method: 'HEAD' })],
      [400, await api.call(`${BOOKINGS}?page=2`, { key: ws.fullKey })],
      [401, await api.call(COURSES)],
      [403, await api.call(COURSES, { key: ws.bookingsOnlyKey, method: 'HEAD' })],
      [404, await api.call('/api/public/v1/sessions', { key: ws.fullKey })],
      [405, await api.call(BOOKINGS, { method: 'DELETE' })],
    ] as const;
    for (const [status, response] of responses) {
      expect(response.status).toBe(status);
      expect(response.headers['cache-control'], `${status}`).toBe('private, no-store');
    }
  });

  it('http.www-authenticate: 401 without a header carries Bearer, any other 401 Bearer error="invalid_token", a 403 Bearer error="insufficient_scope" with the scope the endpoint needs', async () => {
    for (const method of ['GET', 'HEAD']) {
      for (const path of [COURSES, BOOKINGS]) {
        const missing = await api.call(path, { method });
        expect(missing.status).toBe(401);
        expect(missing.headers['www-authenticate']).toBe('Bearer');
        const invalid = await api.call(path, { method, headers: [['Authorization', `Bearer ${forgedApiKey()}`]] });
        expect(invalid.status).toBe(401);
        expect(invalid.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
        const served = await api.call(path, { method, key: ws.fullKey });
        expect(served.status).toBe(200);
        expect(served.headers).not.toHaveProperty('www-authenticate');
      }
      const noCourses = await api.call(COURSES, { method, key: ws.bookingsOnlyKey });
      expect(noCourses.status).toBe(403);
      expect(noCourses.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="courses:read"');
      const noBookings = await api.call(BOOKINGS, { method, key: ws.coursesOnlyKey });
      expect(noBookings.status).toBe(403);
      expect(noBookings.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="bookings:read"');
    }
  });

  it('versioning.path: the version is in the path: the endpoints answer under /api/public/v1/ only, and every API path of the OpenAPI document carries /v1/', async () => {
    expect((await api.call(COURSES, { key: ws.fullKey })).status).toBe(200);
    expect((await api.call(BOOKINGS, { key: ws.fullKey })).status).toBe(200);
    for (const path of ['/api/public/courses', '/api/public/bookings', '/api/public/v2/courses', '/api/public/v0/bookings', '/api/public/V1/courses', '/api/public/v1.0/courses', '/api/v1/courses']) {
      const response = await api.call(path, { key: ws.fullKey });
      expect(response.status, path).toBe(404);
      expect(response.body).toEqual(errorBody('not_found'));
    }
    const apiPaths = Object.keys(spec.paths ?? {}).filter((path) => path.startsWith('/api/'));
    expect(apiPaths.length).toBeGreaterThanOrEqual(3);
    for (const path of apiPaths) expect(path).toMatch(/^\/api\/(public|calendar)\/v1\//);
    expect((spec.info as { version: string }).version).toMatch(/^1\.\d+\.\d+/);
  });

  it('versioning.changelog: the OpenAPI document is served unchanged without authentication', async () => {
    const { readFile } = await import('node:fs/promises');
    const response = await api.call('/openapi/public-v1.yaml');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/yaml/);
    expect(response.text).toBe(await readFile(new URL('../../openapi/public-v1.yaml', import.meta.url), 'utf8'));
  });
});
