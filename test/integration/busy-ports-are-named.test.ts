import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { startTestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';

/**
 * A start whose port another program holds fails naming the setting that moves it: a newcomer whose
 * port 3000 is taken reads `PORT`, not `listen EADDRINUSE` alone (main.ts prints it after
 * "Start failed: "). The start closes what it opened; the next start on a free port works.
 */
describe('a start on a port in use', () => {
  let db: Database;
  let busy: Server;
  let port: number;
  beforeAll(async () => {
    ({ db } = await sharedTestApi('embedded'));
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    port = (busy.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => busy.close(resolve)));

  it('names PORT for the public listener', async () => {
    await expect(startTestApi(db, { PORT: String(port) })).rejects.toThrow(`127.0.0.1:${port} is in use by another program: set PORT to a free port (or stop the other program).`);
  });

  it('names INTERNAL_PORT for the internal listener, and a start on free ports then works', async () => {
    await expect(startTestApi(db, { INTERNAL_PORT: String(port) })).rejects.toThrow(`127.0.0.1:${port} is in use by another program: set INTERNAL_PORT to a free port (or stop the other program).`);
    const api = await startTestApi(db);
    try {
      expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('names HOST when it is not an address of this machine', async () => {
    await expect(startTestApi(db, { HOST: '192.0.2.1' })).rejects.toThrow('HOST 192.0.2.1 is not an address of this machine: set HOST to one of its addresses (127.0.0.1, or 0.0.0.0 for every interface).');
  });
});
