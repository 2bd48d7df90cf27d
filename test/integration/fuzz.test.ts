import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgedApiKey } from '../support/forged-credentials.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { expectMatchesSpec } from '../support/openapi.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';

const REQUESTS = 10_000;
const CONCURRENCY = 16;

/** A small deterministic generator, so that a failing request can be replayed from its index. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  return { next, pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]! };
}

interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: string;
}

function exchange(url: string, bytes: Buffer): Promise<Parsed> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    // Written, not half-closed: a client that half-closes may lose an answer still being computed.
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const head = raw.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = raw.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
      resolve({ status: Number(head[0]?.split(' ')[1] ?? 0), headers, body });
    });
  });
}

function dechunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!size) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 4 + size);
  }
}

describe('fuzzing the public listener', () => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    ws = await seedWorkspace(db, contractFixture('Fuzz', 3));
    api = await startTestApi(db, { RATE_LIMIT_MAX: '1000000', AUTH_FAILURE_LIMIT: '1000000' });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it(`errors.shape: ${REQUESTS} malformed requests get no 5xx, every error in the contract shape and the OpenAPI document, no key material or internal id in any error`, async () => {
    const random = generator(7);
    const validKey = ws.fullKey;
    const keys = [validKey, ws.coursesOnlyKey, forgedApiKey(), `${validKey}${'x'.repeat(200)}`, validKey.slice(0, -1), 'svc_api_', 'svc_cal_abc', `svc_api_${'é'.repeat(38)}`, '', ' ', 'null', '%00'];
    const methods = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'get', 'FOO', 'G ET', 'CONNECT', ''];
    const paths = [
      '/api/public/v1/courses', '/api/public/v1/bookings', '/api/public/v1/courses/', '/api/public/v1/', '/api/public/v2/courses',
      '/api/calendar/v1/svc_cal_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.ics', '/api/calendar/v1/..%2f..%2fetc%2fpasswd.ics', '/api/%', '/api/public/v1/courses%00',
      '/API/public/v1/courses', '//api/public/v1/courses', '/api/public/v1/../v1/courses', `/api/${'a'.repeat(5000)}`, '/api/public/v1/b\u00f6okings', '*', '/',
      '/openapi/public-v1.yaml', '/healthz', '/api/public/v1/courses;x=1',
    ];
    const queries = ['', '', '', '?', '?a=1', '?limit=1000', '?%zz=1', `?${'q'.repeat(3000)}=1`, '?key=svc_api_abc', '?=', '?a&b', '?\u00e9=1'];
    const authorizations = (): Array<string | null> => {
      const key = random.pick(keys);
      const variants = [
        `Bearer ${key}`, `bearer ${key}`, `BEARER ${key}`, `Bearer${key}`, `Bearer  ${key}`, `Basic ${key}`, key, `Token ${key}`,
        `Bearer ${key}\u0000`, `Bearer ${key} extra`, `Bearer ${'k'.repeat(20_000)}`, `Bearer 🔑${key}`, null,
      ];
      const draw = random.next();
      if (draw < 0.15) return [];
      if (draw < 0.85) return [random.pick(variants.slice(0, 3)), random.pick(variants)].slice(0, draw < 0.6 ? 1 : 2);
      return variants.filter(() => random.next() < 0.3);
    };
    const garbageHeaders = [
      'X-Unicode: ✓ ünïcødé', `X-Long: ${'z'.repeat(8000)}`, 'Content-Length: 12', 'Content-Type: application/json', 'Transfer-Encoding: chunked',
      'X-Control: a\u0007b', 'Host:', 'Expect: 100-continue', 'Accept: */*', 'If-None-Match: "x"', 'Connection: keep-alive',
    ];

    const failures: string[] = [];
    let index = 0;
    const statuses = new Map<number, number>();
    const worker = async () => {
      while (index < REQUESTS) {
        const n = index++;
        const method = random.pick(methods);
        const path = random.pick(paths) + random.pick(queries);
        const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
        for (const value of authorizations()) if (value !== null) lines.push(`Authorization: ${value}`);
        if (random.next() < 0.3) lines.push(random.pick(garbageHeaders));
        lines.push('Connection: close');
        const body = random.next() < 0.1 ? '{"not":"read"}' : '';
        if (body) lines.push(`Content-Length: ${body.length}`);
        const response = await exchange(api.url, Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`, 'utf8'));
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        const where = `#${n} ${method} ${path.slice(0, 80)} → ${response.status}`;
        if (response.status >= 500 || response.status < 200) failures.push(`${where}: status`);
        // The OpenAPI document itself shows example tokens; every other body must hold none.
        if (!path.startsWith('/openapi/') && /svc_api_[0-9A-Za-z]{10,}|svc_cal_[0-9A-Za-z]{10,}|whsec_/.test(response.body)) {
          failures.push(`${where}: key material in body`);
        }
        if (response.status >= 400 && method !== 'HEAD') {
          let parsed: unknown;
          try {
            parsed = JSON.parse(response.body);
          } catch {
            failures.push(`${where}: error body is not JSON: ${response.body.slice(0, 80)}`);
            continue;
          }
          const error = (parsed as { error?: { code?: unknown; message?: unknown } }).error;
          if (!error || typeof error.code !== 'string' || typeof error.message !== 'string' || Object.keys(parsed as object).length !== 1) {
            failures.push(`${where}: not the error shape`);
          }
          if (/[a-z]+_[0-9a-f]{32}/.test(response.body)) failures.push(`${where}: internal id in an error`);
          if (!response.headers['content-type']?.startsWith('application/json; charset=utf-8')) failures.push(`${where}: content type`);
          // Requests the parser accepted are checked against the OpenAPI document too.
          if (/^[A-Z]+$/.test(method) && path.startsWith('/') && response.body !== '{"error":{"code":"invalid_request","message":"The request could not be parsed."}}') {
            try {
              await expectMatchesSpec(method, path, { status: response.status, headers: response.headers, body: parsed });
            } catch (mismatch) {
              failures.push(`${where}: ${(mismatch as Error).message.split('\n')[0]}`);
            }
          }
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(failures.slice(0, 20)).toEqual([]);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(REQUESTS);
    // The generated mix really reaches the app, not only the parser.
    for (const status of [200, 400, 401, 403, 404, 405]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);
    // 10,000 validated exchanges are CPU-bound: a busy machine may need more than the default minute.
  }, 180_000);
});
