import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/** Sends raw bytes and returns the raw answer (status line, headers, body). */
function rawExchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describeOnEachDatabase('health, metrics and hostile requests on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Operations', 2));
    api = await startTestApi(db, { AUTH_FAILURE_LIMIT: '2' });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('/healthz answers 200 without authentication and with no data', async () => {
    const response = await api.call('/healthz');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 when the database answers and the migrations are current, 503 when one is pending', async () => {
    expect((await api.call('/readyz')).body).toEqual({ status: 'ready' });
    const last = (await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY run_on DESC, id DESC LIMIT 1')).rows[0]!.name;
    await db.query('UPDATE schema_migrations SET name = $1 WHERE name = $2', [`${last}-renamed`, last]);
    try {
      // The database is asked at most once a second: the answer follows within that second.
      await expect.poll(async () => (await api.call('/readyz')).body, { timeout: 3000, interval: 100 }).toEqual({ status: 'unavailable', reason: 'migrations pending' });
      expect((await api.call('/readyz')).status).toBe(503);
    } finally {
      await db.query('UPDATE schema_migrations SET name = $1 WHERE name = $2', [last, `${last}-renamed`]);
    }
  });

  it('/metrics on the internal listener counts requests by route and status, rate-limit rejections, authentication failures and pool use', async () => {
    await api.call('/api/public/v1/courses', { key: ws.fullKey });
    await api.call('/api/public/v1/courses', { headers: [['Authorization', 'Bearer nope']] });
    await api.call('/api/public/v1/courses', { headers: [['Authorization', 'Bearer nope']] });
    await api.call('/api/public/v1/courses', { headers: [['Authorization', 'Bearer nope']] });
    const response = await fetch(`${api.server.internalUrl}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/http_requests_total\{route="\/api\/public\/v1\/courses",method="GET",status="200"\} [1-9]/);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="\+Inf",route="\/api\/public\/v1\/courses",method="GET",status="200"\} [1-9]/);
    expect(text).toMatch(/authentication_failures_total [2-9]/);
    expect(text).toMatch(/rate_limit_rejections_total\{limiter="authentication"\} [1-9]/);
    expect(text).toMatch(/db_pool_connections\{state="total"\} \d+/);
    expect(text).not.toMatch(/svc_api_|key_[0-9a-f]{32}/);
  });

  it('errors.shape: requests the HTTP parser refuses still get the error shape and a 4xx', async () => {
    for (const bytes of [
      'GARBAGE\r\n\r\n',
      'GET /api/public/v1/courses HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n',
      `GET /api/public/v1/courses HTTP/1.1\r\nHost: x\r\nX-Huge: ${'a'.repeat(20_000)}\r\n\r\n`,
      'GET /api/public/v1/courses HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n',
    ]) {
      const answer = await rawExchange(api.url, bytes);
      expect(answer).toMatch(/^HTTP\/1\.1 4\d\d /);
      expect(answer).toContain('Content-Type: application/json; charset=utf-8');
      expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe('{"error":{"code":"invalid_request","message":"The request could not be parsed."}}');
    }
  });

  it('http.no-body: a request with a body is answered and its connection closed instead of drained', async () => {
    const response = await api.call('/api/public/v1/courses', { key: ws.fullKey, body: 'x'.repeat(1000) });
    expect(response.status).toBe(200);
    expect(response.headers.connection).toBe('close');
  });
});

describe('readiness without a database', () => {
  it('/readyz answers 503 database unreachable and /healthz still 200', async () => {
    const unreachable = await openDatabase({ url: 'postgresql://postgres@127.0.0.1:9/none', connectionTimeoutMs: 500 });
    const api = await startTestApi(unreachable);
    try {
      expect((await api.call('/healthz')).status).toBe(200);
      const ready = await api.call('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'unavailable', reason: 'database unreachable' });
    } finally {
      await api.close();
      await unreachable.close();
    }
  });
});
