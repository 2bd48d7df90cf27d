import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { expectMatchesSpec } from '../support/openapi.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';

const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;
const MAX_CONNECTIONS = 4;

interface Exchange {
  /** Everything the server sent before it closed the connection. */
  text: string;
  /** Milliseconds from the connection to its close. */
  closedAfterMs: number;
}

/** Opens a connection, lets `talk` write to it (slowly), and resolves when the server closes it. */
function exchange(url: string, talk: (socket: Socket) => void): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = '';
    let started = 0;
    const socket = connect(Number(port), hostname, () => {
      started = Date.now();
      talk(socket);
    });
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('error', () => {});
    socket.on('close', () => resolve({ text, closedAfterMs: Date.now() - started }));
    setTimeout(() => reject(new Error(`the server did not close the connection in 10 s: ${text}`)), 10_000).unref();
  });
}

/** Writes `line` every 200 ms while the connection is open: a client that never finishes. */
function trickle(socket: Socket, line: string): void {
  const timer = setInterval(() => (socket.writable ? socket.write(line) : clearInterval(timer)), 200);
  socket.on('close', () => clearInterval(timer));
}

function parse(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  const json = (headers['content-type'] ?? '').startsWith('application/json');
  return { status: Number(statusLine!.split(' ')[1]), headers, body: json ? (JSON.parse(body) as unknown) : body };
}

/** A connection that stays open (its request line sent, nothing more) until `release`. */
function hold(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write('GET /healthz HTTP/1.1\r\n');
      resolve(socket);
    });
    socket.on('error', () => {});
  });
}

// Listener behaviour alone: one database is enough.
describe('slow clients on both listeners', () => {
  let db: Database;
  let api: TestApi;
  let internalUrl: string;
  const measured: string[] = [];

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    api = await startTestApi(db, {
      HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      MAX_CONNECTIONS: String(MAX_CONNECTIONS),
    });
    internalUrl = api.server.internalUrl!;
  });
  afterAll(async () => {
    console.log(`timeouts acted after: ${measured.join(', ')}`);
    await api?.close();
    await db?.close();
  });

  const expectTimedOut = async (answer: Exchange, timeoutMs: number, what: string) => {
    measured.push(`${what} ${answer.closedAfterMs} ms (configured ${timeoutMs})`);
    const response = parse(answer.text);
    expect(response.status, answer.text).toBe(408);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.headers.connection).toBe('close');
    expect(response.body).toEqual({ error: { code: 'request_timeout', message: expect.any(String) } });
    // Enforced once the configured time has passed, and within one second of it.
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(timeoutMs - 50);
    expect(answer.closedAfterMs).toBeLessThan(timeoutMs + 1000);
    return response;
  };

  it('http.request-timeout: a client that sends its headers one line at a time gets 408 in the error shape once HEADERS_TIMEOUT_MS has passed', async () => {
    const answer = await exchange(api.url, (socket) => {
      socket.write('GET /api/public/v1/courses HTTP/1.1\r\nHost: localhost\r\n');
      trickle(socket, 'X-Slow: yes\r\n');
    });
    const response = await expectTimedOut(answer, HEADERS_TIMEOUT_MS, 'public, slow headers');
    await expectMatchesSpec('GET', '/api/public/v1/courses', response);
  });

  it('http.request-timeout: a connection that sends nothing at all is answered 408 and closed after HEADERS_TIMEOUT_MS', async () => {
    await expectTimedOut(await exchange(api.url, () => {}), HEADERS_TIMEOUT_MS, 'public, silent');
  });

  it('http.request-timeout: the internal listener enforces the same header timeout', async () => {
    const answer = await exchange(internalUrl, (socket) => {
      socket.write('GET /metrics HTTP/1.1\r\n');
      trickle(socket, 'X-Slow: yes\r\n');
    });
    await expectTimedOut(answer, HEADERS_TIMEOUT_MS, 'internal, slow headers');
  });

  it('http.request-timeout: the internal listener cuts off a GraphQL request whose body trickles in once REQUEST_TIMEOUT_MS has passed', async () => {
    const answer = await exchange(internalUrl, (socket) => {
      socket.write(`POST /graphql HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${INTERNAL_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
      trickle(socket, ' ');
    });
    await expectTimedOut(answer, REQUEST_TIMEOUT_MS, 'internal, slow body');
  });

  it.each([
    ['public', () => api.url],
    ['internal', () => internalUrl],
  ])('the %s listener keeps at most MAX_CONNECTIONS connections open: one more is closed at once, unanswered', async (_name, url) => {
    const held = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => hold(url())));
    try {
      const refused = await exchange(url(), (socket) => socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n'));
      expect(refused.text).toBe('');
      expect(refused.closedAfterMs).toBeLessThan(HEADERS_TIMEOUT_MS);
    } finally {
      for (const socket of held) socket.destroy();
    }
    await expect
      .poll(async () => parse((await exchange(url(), (socket) => socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'))).text).status, { timeout: 2000 })
      .toBe(url() === api.url ? 200 : 404);
  });
});
