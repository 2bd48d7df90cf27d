import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';

/** Node's own keep-alive timeout, which the service's default must outlast. */
const NODE_DEFAULT_MS = 5_000;

/** A raw keep-alive connection: requests written one at a time, each answer read whole, the close seen. */
function keepAliveConnection(url: string) {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  let text = '';
  let closedAt: number | null = null;
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  socket.on('error', () => {});
  socket.on('close', () => (closedAt = Date.now()));
  const opened = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return {
    async get(path: string): Promise<{ status: number; keepAlive: string | undefined }> {
      await opened;
      text = '';
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      const deadline = Date.now() + 10_000;
      // /healthz answers a small JSON body with its Content-Length: the answer is whole once the body has it.
      for (;;) {
        const [head, body = ''] = text.split('\r\n\r\n');
        const length = /content-length: (\d+)/i.exec(head ?? '')?.[1];
        if (length && Buffer.byteLength(body) >= Number(length)) {
          return { status: Number(head!.split(' ')[1]), keepAlive: /\r\nkeep-alive: ([^\r]*)/i.exec(head!)?.[1] };
        }
        if (closedAt !== null || Date.now() > deadline) throw new Error(`no whole answer on the connection (closed: ${closedAt !== null}): ${text}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    closedAt: () => closedAt,
    close: () => socket.destroy(),
  };
}

// Listener behaviour alone: one database is enough.
describe('idle keep-alive connections', () => {
  let db: Database;
  let lasting: TestApi;
  let brief: TestApi;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    // A short header timeout beside the default keep-alive: an idle connection is not a slow request.
    lasting = await startTestApi(db, { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '2000' });
    brief = await startTestApi(db, { KEEP_ALIVE_TIMEOUT_MS: '1500' });
  });
  afterAll(async () => {
    await lasting?.close();
    await brief?.close();
    await db?.close();
  });

  it('an idle connection outlasts the idle timeout of the clients and proxies in front (65 s, said in Keep-Alive), so that none meets a reset on reusing it', async () => {
    const connection = keepAliveConnection(lasting.url);
    try {
      expect(await connection.get('/healthz')).toEqual({ status: 200, keepAlive: 'timeout=65' });
      // Idle past Node's own timeout and past the header timeout: the same connection serves the next request.
      await new Promise((resolve) => setTimeout(resolve, NODE_DEFAULT_MS + 500));
      expect(connection.closedAt()).toBeNull();
      expect(await connection.get('/healthz')).toEqual({ status: 200, keepAlive: 'timeout=65' });
    } finally {
      connection.close();
    }
  }, 30_000);

  it('an idle connection is closed once KEEP_ALIVE_TIMEOUT_MS has passed', async () => {
    const connection = keepAliveConnection(brief.url);
    try {
      expect(await connection.get('/healthz')).toEqual({ status: 200, keepAlive: 'timeout=1' });
      const answeredAt = Date.now();
      await expect.poll(() => connection.closedAt(), { timeout: 5_000, interval: 50 }).not.toBeNull();
      expect(connection.closedAt()! - answeredAt).toBeGreaterThanOrEqual(1_400);
    } finally {
      connection.close();
    }
  });
});
