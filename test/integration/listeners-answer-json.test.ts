import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { rawRequest } from '../support/http.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

interface Answer {
  status: number;
  contentType: string;
  text: string;
  body: { errors?: Array<{ message: string; extensions?: { code?: string } }>; error?: { code: string; message: string } };
}

/** What Express's default error page or a leaked error would show. */
const INTERNALS = /<html|<pre>|node_modules|\.[jt]s:\d|\n\s+at |SyntaxError|PayloadTooLargeError|UnsupportedMediaTypeError|internal_error/;

async function send(url: string, path: string, init: { method?: string; body?: string | Buffer; contentType?: string; token?: string | null } = {}): Promise<Answer> {
  const headers: Array<[string, string]> = [];
  if (init.contentType) headers.push(['Content-Type', init.contentType]);
  if (init.token !== null) headers.push(['Authorization', `Bearer ${init.token ?? INTERNAL_TOKEN}`]);
  const response = await rawRequest(url, path, { method: init.method ?? 'POST', headers, ...(init.body !== undefined ? { body: init.body } : {}) });
  return { status: response.status, contentType: response.headers['content-type'] ?? '', text: response.text, body: response.body as Answer['body'] };
}

const codeOf = (answer: Answer) => answer.body.errors?.[0]?.extensions?.code ?? answer.body.error?.code;

function expectJsonError(answer: Answer, status: number, code: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.contentType).toBe('application/json; charset=utf-8');
  expect(codeOf(answer), answer.text).toBe(code);
  expect(answer.text).not.toMatch(INTERNALS);
}

/** Bodies that are not GraphQL requests, and the answer each gets on /graphql. */
const HOSTILE_BODIES: Array<[string, { body: string; contentType: string }, number, string]> = [
  ['malformed JSON', { body: '{bad json', contentType: 'application/json' }, 400, 'invalid_request'],
  ['a body of 2 MB', { body: JSON.stringify({ query: '{ __typename }', padding: 'x'.repeat(2 * 1024 * 1024) }), contentType: 'application/json' }, 413, 'payload_too_large'],
  ['JSON in a charset other than UTF-8', { body: JSON.stringify({ query: '{ __typename }' }), contentType: 'application/json; charset=latin9' }, 400, 'invalid_request'],
  ['a JSON string instead of an object', { body: '"{ __typename }"', contentType: 'application/json' }, 400, 'invalid_request'],
  ['a batch of two operations', { body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]), contentType: 'application/json' }, 400, 'BAD_REQUEST'],
  ['an object without a query', { body: JSON.stringify({ variables: {} }), contentType: 'application/json' }, 400, 'BAD_REQUEST'],
  ['a query that is not a string', { body: JSON.stringify({ query: 5 }), contentType: 'application/json' }, 400, 'BAD_REQUEST'],
  ['a form instead of JSON', { body: 'query=%7B__typename%7D', contentType: 'application/x-www-form-urlencoded' }, 400, 'BAD_REQUEST'],
];

describeOnEachDatabase('every listener answers JSON, never Express\u2019s error page (%s)', (target) => {
  let db: Database;
  let printed: MockInstance[];

  beforeAll(async () => {
    db = await openTestDatabase(target);
  });
  afterAll(async () => {
    await db?.close();
  });

  beforeEach(() => {
    printed = [
      vi.spyOn(process.stdout, 'write'),
      vi.spyOn(process.stderr, 'write'),
      ...(['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((method) => vi.spyOn(console, method)),
    ];
  });
  afterEach(() => {
    const calls = printed.flatMap((spy) => spy.mock.calls.map((call) => String(call[0])));
    for (const spy of printed) spy.mockRestore();
    expect(calls).toEqual([]);
  });

  // Express shows the stack on its error page unless NODE_ENV is production, and Apollo Server
  // decides on introspection and stack traces from it: the answers must not depend on it.
  describe.each(['development', 'production', 'test'])('with NODE_ENV=%s', (nodeEnv) => {
    let api: TestApi;
    let previous: string | undefined;

    beforeAll(async () => {
      previous = process.env.NODE_ENV;
      process.env.NODE_ENV = nodeEnv;
      api = await startTestApi(db);
    });
    afterAll(async () => {
      await api?.close();
      if (previous === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = previous;
    });

    it.each(HOSTILE_BODIES)('/graphql answers %s with a coded JSON error in GraphQL\u2019s shape, without a stack', async (_what, request, status, code) => {
      const answer = await send(api.server.internalUrl!, '/graphql', request);
      expectJsonError(answer, status, code);
      expect(answer.body.errors).toHaveLength(1);
    });

    it('the audit line of a body over the limit has its status and code; the JSON log holds no stack of it', async () => {
      const before = api.logs.length;
      await send(api.server.internalUrl!, '/graphql', HOSTILE_BODIES[1]![1]);
      await vi.waitFor(() => expect(api.logs.length).toBeGreaterThan(before));
      const lines = api.logs.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toEqual([expect.objectContaining({ audit: 'internal-graphql', tokenName: 'bootstrap', status: 413, errorCodes: ['payload_too_large'] })]);
    });

    it('introspection and the stack-free error answers are the same whatever NODE_ENV is', async () => {
      const introspection = await send(api.server.internalUrl!, '/graphql', { contentType: 'application/json', body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }) });
      expect(introspection.status).toBe(200);
      expect(JSON.parse(introspection.text)).toEqual({
        data: { __schema: { queryType: { name: 'Query' } } },
        // Introspection reads nothing from the database: it costs nothing.
        extensions: { cost: { estimate: 0, actual: 0, budget: expect.any(Number), remaining: expect.any(Number), resetSeconds: expect.any(Number) } },
      });
      const cycle = await send(api.server.internalUrl!, '/graphql', { contentType: 'application/json', body: JSON.stringify({ query: 'fragment A on Query { ...A } { ...A }' }) });
      expectJsonError(cycle, 400, 'GRAPHQL_VALIDATION_FAILED');
    });

    it('the internal listener answers unknown paths, other methods and /metrics without a token with JSON errors', async () => {
      const url = api.server.internalUrl!;
      expectJsonError(await send(url, '/nowhere', { method: 'GET' }), 404, 'not_found');
      expectJsonError(await send(url, '/metrics', { method: 'POST', contentType: 'application/json', body: '{bad json' }), 404, 'not_found');
      expectJsonError(await send(url, '/metrics', { method: 'GET', token: 'not-a-metrics-token-at-all' }), 401, 'invalid_api_key');
      expectJsonError(await send(url, '/graphql', { method: 'PUT', contentType: 'application/json', body: '{}' }), 405, 'BAD_REQUEST');
      expectJsonError(await send(url, '/graphql', { method: 'POST', token: null, contentType: 'application/json', body: '{bad json' }), 401, 'invalid_api_key');
      const metrics = await send(url, '/metrics', { method: 'GET' });
      expect(metrics.status).toBe(200);
    });

    it('the public listener answers a body it never reads, unknown paths and malformed paths with JSON errors', async () => {
      const url = api.server.publicUrl;
      expectJsonError(await send(url, '/api/public/v1/courses', { method: 'POST', contentType: 'application/json', body: '{bad json', token: null }), 405, 'method_not_allowed');
      expectJsonError(await send(url, '/api/public/v1/courses', { method: 'GET', contentType: 'application/json', body: 'x'.repeat(200 * 1024), token: null }), 401, 'invalid_api_key');
      expectJsonError(await send(url, '/graphql', { method: 'POST', contentType: 'application/json', body: '{bad json' }), 404, 'not_found');
      expectJsonError(await send(url, '/api/calendar/v1/%E0%A4%A.ics', { method: 'GET', token: null }), 400, 'invalid_request');
    });
  });
});
