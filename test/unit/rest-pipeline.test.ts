import express from 'express';
import inject from 'light-my-request';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AnswerRequest } from '../../src/answer-cache/answer-cache.ts';
import type { ActiveApiKey } from '../../src/auth/authenticator.ts';
import { AllowList } from '../../src/auth/key-policy.ts';
import type { Scope } from '../../src/auth/scopes.ts';
import type { ActiveFeed } from '../../src/calendar/feed-token-store.ts';
import { ApiError } from '../../src/errors.ts';
import { createLogger, createRedactor } from '../../src/logger.ts';
import { createRequestCounts } from '../../src/observability/metrics.ts';
import { FailureGuard } from '../../src/rate-limit/failure-guard.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import { MemoryWindows } from '../../src/rate-limit/memory-windows.ts';
import { dispatch } from '../../rest/pipeline/dispatch.ts';
import { requestLog } from '../../rest/pipeline/request-log.ts';
import { calendarFeedRoute } from '../../rest/routes/calendar-feed.ts';
import { publicV1Routes } from '../../rest/routes/public-v1.ts';

/**
 * The public listener's pipeline in-process, with no socket and no database: the declared routes
 * of rest/routes/ run by the dispatcher inside an express app, answered through light-my-request's
 * injected requests. The key store, the answer cache and the feed lookup are fakes; the limits are
 * the real in-memory windows under vitest's fake clock. test/integration/rest-*.test.ts hold the
 * same behaviour over HTTP against the real parts.
 */

const LIMIT = 3;
const WINDOW_S = 60;
const keyOf = (id: string, scopes: Scope[], allowed: string[] | null = null): ActiveApiKey => ({
  id,
  workspaceId: 'ws_1',
  scopes: new Set(scopes),
  expiresAt: null,
  allowedFrom: allowed ? new AllowList(allowed) : null,
  workspace: { id: 'ws_1' },
});
// Injected requests come from 127.0.0.1: a key fenced to 10.0.0.0/8 is used from outside its list.
const OUTSIDE = ['10.0.0.0/8', '2001:db8::/32'];
const PLAIN: Record<string, [string, Scope[]]> = {
  full: ['key_full', ['courses:read', 'bookings:read', 'participants:read']],
  courses: ['key_courses', ['courses:read']],
  bookings: ['key_bookings', ['bookings:read']],
  spent: ['key_spent', ['courses:read', 'bookings:read']],
  'spent-courses': ['key_spent_courses', ['courses:read']],
  'spent-bookings': ['key_spent_bookings', ['bookings:read']],
};
const KEYS: Record<string, ActiveApiKey> = Object.fromEntries(
  Object.entries(PLAIN).flatMap(([name, [id, scopes]]) => [
    [`Bearer ${name}`, keyOf(id, scopes)],
    [`Bearer fenced-${name}`, keyOf(`${id}_fenced`, scopes, OUTSIDE)],
    [`Bearer inside-${name}`, keyOf(`${id}_inside`, scopes, ['10.0.0.0/8', '127.0.0.0/8'])],
  ]),
);
const FEEDS: Record<string, ActiveFeed> = {
  good: { id: 'feed_good', workspaceId: 'ws_1', dataVersion: '7/0:1/1' },
  spent: { id: 'feed_spent', workspaceId: 'ws_1', dataVersion: '7/0:1/1' },
};

function harness() {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  const registry = new Registry();
  const counts = createRequestCounts(registry);
  const keyWindows = new MemoryWindows(LIMIT, WINDOW_S);
  const feedWindows = new MemoryWindows(LIMIT, WINDOW_S);
  const failureWindows = new MemoryWindows(2, WINDOW_S);
  const decision = () => ({ allowed: false, remaining: 0, resetSeconds: 0 });
  const rateLimiters: RateLimiters = {
    max: LIMIT,
    windowSeconds: WINDOW_S,
    consumeKey: async (id) => keyWindows.consume(id, decision()),
    consumeKeyNow: (id, into) => keyWindows.consume(id, into),
    failures: { failed: async (address) => failureWindows.consume(address, decision()) },
    consumeFeed: async (id) => feedWindows.consume(id, decision()),
    consumePortal: () => Promise.reject(new Error('no portal session here')),
    // The internal listener's cost budgets: no public route spends them.
    costs: {
      windowSeconds: WINDOW_S,
      spend: () => Promise.reject(new Error('a public route spent a cost budget')),
      extend: () => Promise.reject(new Error('a public route spent a cost budget')),
      adjust: () => Promise.reject(new Error('a public route settled a cost budget')),
      peek: () => Promise.reject(new Error('a public route read a cost budget')),
    },
    close: async () => {},
  };
  const asked: AnswerRequest[] = [];
  const answerCache = {
    async answer(request: AnswerRequest) {
      asked.push(request);
      const body = [Buffer.from(JSON.stringify({ data: [request.answer, request.variables] }))];
      return { body, length: body[0]!.length, outcome: 'hit' as const };
    },
    answerInPieces(request: AnswerRequest) {
      return this.answer(request);
    },
  };
  const guard = new FailureGuard(rateLimiters.failures);
  const authenticator = {
    verified: (header: string | readonly string[] | undefined) => (typeof header === 'string' ? KEYS[header] : undefined),
    async authenticate(header: string | readonly string[] | undefined, address: string | (() => string) = 'unknown'): Promise<ActiveApiKey> {
      const key = typeof header === 'string' ? KEYS[header] : undefined;
      if (key) return key;
      throw await guard.refuse(typeof address === 'string' ? address : address(), new ApiError('invalid_api_key'));
    },
  };
  const redactor = createRedactor();
  const deps = { db: {} as never, registry: {} as never, operations: {} as never, pieceVersions: {} as never, authenticator, rateLimiters, answerCache, redactor, guard };
  const routes = [...publicV1Routes(deps), calendarFeedRoute({ ...deps, activeFeed: async (token) => FEEDS[token] ?? null })];
  const recorded: Array<{ keyId: string; status: number; errorCode: string | null; cache: string | null; requestId: string }> = [];
  const activity = {
    record: (key: ActiveApiKey, request: { requestId: string; errorCode: string | null; cache: string | null }, status: number) =>
      void recorded.push({ keyId: key.id, status, errorCode: request.errorCode, cache: request.cache, requestId: request.requestId }),
  };
  const app = express();
  app.disable('x-powered-by');
  app.use(dispatch({ routes, finish: requestLog(logger, counts, redactor, activity), redactor, logger, lifecycle: { draining: false } }));
  // The spent keys and feed have used their window before the test's requests.
  for (let i = 0; i < LIMIT; i += 1) {
    for (const key of Object.values(KEYS)) if (key.id.startsWith('key_spent')) keyWindows.consume(key.id, decision());
    feedWindows.consume('feed_spent', decision());
  }
  const request = (method: string, url: string, authorization?: string, headers: Record<string, string> = {}) =>
    inject(app, { method: method as 'GET', url, headers: { ...headers, ...(authorization ? { authorization } : {}) } });
  return { request, lines, registry, asked, recorded, keyWindows };
}

describe('the public pipeline, in-process', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-25T12:00:00Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  // Each fault a request can carry, in the contract's order, and the answer it gets when it is the first.
  const FAULTS = [
    { fault: 'method', status: 405, code: 'method_not_allowed' },
    { fault: 'authentication', status: 401, code: 'invalid_api_key' },
    { fault: 'address', status: 403, code: 'ip_not_allowed' },
    { fault: 'rate limit', status: 429, code: 'rate_limit_exceeded' },
    { fault: 'scope', status: 403, code: 'missing_scope' },
    { fault: 'query string', status: 400, code: 'invalid_request' },
  ] as const;
  const routes = [
    { path: '/api/public/v1/courses', lacking: 'bookings', holding: 'courses', spentLacking: 'spent-bookings' },
    { path: '/api/public/v1/bookings', lacking: 'courses', holding: 'bookings', spentLacking: 'spent-courses' },
  ] as const;
  const cases = routes.flatMap((route) =>
    [route.path, `${route.path}/`].flatMap((path) =>
      Array.from({ length: 2 ** FAULTS.length }, (_, mask) => {
        const has = (fault: (typeof FAULTS)[number]['fault']) => (mask & (1 << FAULTS.findIndex((entry) => entry.fault === fault))) !== 0;
        const first = FAULTS.find((entry) => has(entry.fault));
        const spent = has('scope') ? route.spentLacking : 'spent';
        // Without the address fault, the keys of the paths with a trailing slash have an allow list the address is inside.
        const fence = has('address') ? 'fenced-' : path.endsWith('/') ? 'inside-' : '';
        const name = has('rate limit') ? spent : has('scope') ? route.lacking : route.holding;
        const authorization = has('authentication') ? 'Bearer nope' : `Bearer ${fence}${name}`;
        return { mask, first, authorization, method: has('method') ? 'POST' : 'GET', url: has('query string') ? `${path}?limit=5` : path };
      }),
    ),
  );

  it.each(cases)(
    'http.checks-order: $method $url with $authorization (faults $mask) gets the error of its first fault',
    async ({ method, url, authorization, first }) => {
      const { request } = harness();
      const answer = await request(method, url, authorization);
      expect(answer.statusCode).toBe(first?.status ?? 200);
      if (first) expect(answer.json()).toEqual({ error: { code: first.code, message: expect.any(String) } });
      expect(answer.headers['cache-control']).toBe('private, no-store');
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      // Every answer to a key used where it may be carries the rate limit's headers; none before the
      // key is known, and none for a key used from outside its allow list, which its limit never counts.
      const keyKnown = first === undefined || !['method_not_allowed', 'invalid_api_key', 'ip_not_allowed'].includes(first.code);
      expect(answer.headers['ratelimit-policy'], url).toBe(keyKnown ? `"default";q=${LIMIT};w=${WINDOW_S}` : undefined);
    },
  );

  it('http.checks-order: the calendar feed checks the method, then the token, then the feed limit, then answers', async () => {
    const { request } = harness();
    expect((await request('POST', '/api/calendar/v1/nope.ics')).statusCode).toBe(405);
    expect((await request('GET', '/api/calendar/v1/nope.ics')).statusCode).toBe(404);
    expect((await request('GET', '/api/calendar/v1/spent.ics')).statusCode).toBe(429);
    const answered = await request('GET', '/api/calendar/v1/good.ics');
    expect(answered.statusCode).toBe(200);
    expect(answered.headers['content-type']).toBe('text/calendar; charset=utf-8');
    const revalidated = await request('GET', '/api/calendar/v1/good.ics', undefined, { 'if-none-match': String(answered.headers.etag) });
    expect([revalidated.statusCode, revalidated.headers.etag, revalidated.body]).toEqual([304, answered.headers.etag, '']);
  });

  it('limits.per-key: the window counts in place on the fake clock: the 4th request of 3 is refused, the next window allows again', async () => {
    const { request } = harness();
    const seen = [];
    for (let i = 0; i < LIMIT + 1; i += 1) {
      const answer = await request('GET', '/api/public/v1/courses', 'Bearer courses');
      seen.push([answer.statusCode, answer.headers.ratelimit]);
    }
    expect(seen).toEqual([
      [200, `"default";r=2;t=${WINDOW_S}`],
      [200, `"default";r=1;t=${WINDOW_S}`],
      [200, `"default";r=0;t=${WINDOW_S}`],
      [429, `"default";r=0;t=${WINDOW_S}`],
    ]);
    vi.setSystemTime(Date.now() + 45_000);
    expect((await request('GET', '/api/public/v1/courses', 'Bearer courses')).headers.ratelimit).toBe('"default";r=0;t=15');
    vi.setSystemTime(Date.now() + 15_000);
    const next = await request('GET', '/api/public/v1/courses', 'Bearer courses');
    expect([next.statusCode, next.headers.ratelimit]).toEqual([200, `"default";r=2;t=${WINDOW_S}`]);
  });

  it('auth.ip-allow-list: a key used from outside its allow list gets 403 ip_not_allowed, spends nothing of its budget and learns nothing of it', async () => {
    const { request, keyWindows } = harness();
    const refused = await request('GET', '/api/public/v1/courses', 'Bearer fenced-courses');
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: { code: 'ip_not_allowed', message: 'The API key may not be used from this client address.' } });
    expect(refused.body).not.toMatch(/10\.0\.0\.0|2001:db8|key_courses|fenced/);
    for (const header of ['ratelimit', 'ratelimit-policy', 'retry-after', 'www-authenticate']) expect(refused.headers[header], header).toBeUndefined();
    // The refused request took nothing from the window: a fresh window still has all of it.
    const fresh = { allowed: false, remaining: 0, resetSeconds: 0 };
    expect(keyWindows.consume('key_courses_fenced', fresh).remaining).toBe(LIMIT - 1);
    const inside = await request('GET', '/api/public/v1/courses', 'Bearer inside-courses');
    expect([inside.statusCode, inside.headers.ratelimit]).toEqual([200, `"default";r=${LIMIT - 1};t=${WINDOW_S}`]);
  });

  it("counts each request of a valid key in the key's activity, with its status, error code and cache outcome; a request without a valid key in none", async () => {
    const { request, recorded } = harness();
    const answered = await request('GET', '/api/public/v1/courses', 'Bearer courses');
    await request('GET', '/api/public/v1/courses?x=1', 'Bearer courses');
    await request('GET', '/api/public/v1/courses', 'Bearer fenced-courses');
    await request('GET', '/api/public/v1/courses', 'Bearer spent');
    await request('GET', '/api/public/v1/courses', 'Bearer nope');
    await request('POST', '/api/public/v1/courses', 'Bearer courses');
    expect(recorded).toEqual([
      { keyId: 'key_courses', status: 200, errorCode: null, cache: 'hit', requestId: answered.headers['x-request-id'] },
      { keyId: 'key_courses', status: 400, errorCode: 'invalid_request', cache: null, requestId: expect.any(String) },
      { keyId: 'key_courses_fenced', status: 403, errorCode: 'ip_not_allowed', cache: null, requestId: expect.any(String) },
      { keyId: 'key_spent', status: 429, errorCode: 'rate_limit_exceeded', cache: null, requestId: expect.any(String) },
    ]);
  });

  it('limits.auth-failures: failed authentications count per address, past the limit 429 instead of 401, named by the metrics', async () => {
    const { request, registry } = harness();
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await request('GET', '/api/public/v1/courses', 'Bearer nope')).statusCode);
    expect(statuses).toEqual([401, 401, 429]);
    const text = await registry.metrics();
    expect(text).toMatch(/^authentication_failures_total 2$/m);
    expect(text).toMatch(/^rate_limit_rejections_total\{limiter="authentication"\} 1$/m);
  });

  it('asks the answer cache once per request, with one request object per key and answer, the participant variant in its variables', async () => {
    const { request, asked } = harness();
    await request('GET', '/api/public/v1/bookings', 'Bearer full');
    await request('GET', '/api/public/v1/bookings', 'Bearer full');
    await request('GET', '/api/public/v1/bookings', 'Bearer bookings');
    expect(asked.map((entry) => entry.variables)).toEqual([
      { workspaceId: 'ws_1', withParticipant: true },
      { workspaceId: 'ws_1', withParticipant: true },
      { workspaceId: 'ws_1', withParticipant: false },
    ]);
    expect(asked[0]).toBe(asked[1]);
  });

  it('writes one log line per request from its state (route, key id, cache outcome, status) and counts it in the metrics', async () => {
    const { request, lines, registry } = harness();
    const answered = await request('GET', '/api/public/v1/bookings', 'Bearer full');
    await request('GET', '/api/public/v1/bookings?secret=svc_api_0123456789abcdef0123456789abcdef012345', 'Bearer full');
    await request('GET', '/nowhere');
    // The lines of a turn of the event loop leave together at its end.
    await vi.waitUntil(() => lines.join('').split('\n').length > 3);
    const logged = lines.join('').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toEqual([
      expect.objectContaining({ level: 30, msg: 'request', requestId: answered.headers['x-request-id'], method: 'GET', path: '/api/public/v1/bookings', query: null, route: '/api/public/v1/bookings', status: 200, keyId: 'key_full', cache: 'hit' }),
      expect.objectContaining({ route: '/api/public/v1/bookings', status: 400, query: 'secret=svc_api_[redacted]', cache: null }),
      expect.objectContaining({ route: 'unmatched', path: '/nowhere', status: 404, keyId: null }),
    ]);
    expect(typeof logged[0]!.durationMs).toBe('number');
    const text = await registry.metrics();
    expect(text).toMatch(/^http_requests_total\{route="\/api\/public\/v1\/bookings",method="GET",status="200"\} 1$/m);
    expect(text).toMatch(/^http_request_duration_seconds_count\{route="\/api\/public\/v1\/bookings",method="GET",status="200"\} 1$/m);
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="\+Inf",route="unmatched",method="GET",status="404"\} 1$/m);
    expect(text).toMatch(/^response_cache_answers_total\{answer="bookings",outcome="hit"\} 1$/m);
  });

  it('echoes a caller-supplied request id without a secret in X-Request-Id and its log line, and replaces one that holds a secret', async () => {
    const { request, lines } = harness();
    const kept = await request('GET', '/nowhere', undefined, { 'x-request-id': 'trace-42.a:b' });
    const replaced = await request('GET', '/nowhere', undefined, { 'x-request-id': 'svc_api_0123456789abcdef0123456789abcdef012345' });
    expect(kept.headers['x-request-id']).toBe('trace-42.a:b');
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    await vi.waitUntil(() => lines.join('').split('\n').length > 2);
    const logged = lines.join('').trimEnd().split('\n');
    expect(logged.map((line) => (JSON.parse(line) as { requestId: string }).requestId)).toEqual(['trace-42.a:b', replaced.headers['x-request-id']]);
  });
});
