import { request } from 'node:http';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { revokeApiKey } from '../../src/auth/api-key-store.ts';
import { openSharedDatabase, type SharedDatabase } from '../support/databases.ts';
import { contractFixture, seedWorkspace } from '../support/seed.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { DATABASE_TARGETS, describeOnEachDatabase, describeOnEachStore, redisUrlWithDatabase, type LimiterStore } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';

/** One GET without keep-alive; resolves with the status, or with the error of a failed exchange. */
function get(url: string, key: string): Promise<{ status: number } | { error: string; sent: boolean }> {
  return new Promise((resolve) => {
    let sent = false;
    const req = request(`${url}${COURSES}`, { headers: { Authorization: `Bearer ${key}`, Connection: 'close' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      res.on('error', (error) => resolve({ error: error.message, sent: true }));
    });
    req.on('socket', (socket) => socket.on('connect', () => (sent = true)));
    req.on('error', (error) => resolve({ error: (error as NodeJS.ErrnoException).code ?? error.message, sent }));
    req.end();
  });
}

const stores: LimiterStore[] = ['postgres', 'redis'];

describeOnEachStore(DATABASE_TARGETS, stores, 'two API processes on %s sharing the %s rate-limit store', (target, store) => {
  let deployment: SharedDatabase;
  let one: ServerProcess;
  let two: ServerProcess;

  beforeAll(async () => {
    deployment = await openSharedDatabase(target, 20);
    const env = { ...deployment.env, RATE_LIMIT_STORE: store, ...(store === 'redis' ? { REDIS_URL: redisUrlWithDatabase(12) } : {}) };
    [one, two] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  });
  afterAll(async () => {
    await one?.stop();
    await two?.stop();
    await deployment?.close();
  });

  it('limits.per-key: 200 concurrent requests with one key spread over both give exactly 120 successes inside the window', async () => {
    const ws = await seedWorkspace(deployment.db, contractFixture(`Shared ${store}`, 1));
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => get(i % 2 === 0 ? one.url : two.url, ws.coursesOnlyKey)));
    const statuses = results.map((result) => ('status' in result ? result.status : result.error));
    expect(statuses.filter((status) => status === 200)).toHaveLength(120);
    expect(statuses.filter((status) => status === 429)).toHaveLength(80);
  });

  it('auth.revocation: a key revoked through one instance is refused by the other within 1 s', async () => {
    const ws = await seedWorkspace(deployment.db, contractFixture(`Revoked ${store}`, 1));
    expect(await get(one.url, ws.fullKey)).toEqual({ status: 200 });
    expect(await get(two.url, ws.fullKey)).toEqual({ status: 200 });
    const id = (await deployment.db.query<{ id: string }>('SELECT id FROM api_keys WHERE last4 = $1', [ws.fullKey.slice(-4)])).rows[0]!.id;
    const revokedAt = Date.now();
    await revokeApiKey(deployment.db, id);
    let refusedAt = 0;
    while (Date.now() - revokedAt < 3000) {
      const [a, b] = await Promise.all([get(one.url, ws.fullKey), get(two.url, ws.fullKey)]);
      if ('status' in a && 'status' in b && a.status === 401 && b.status === 401) {
        refusedAt = Date.now();
        break;
      }
    }
    expect(refusedAt).toBeGreaterThan(0);
    expect(refusedAt - revokedAt).toBeLessThan(1000);
  });

  it('logs of both processes contain no API key, feed token or webhook secret', async () => {
    const ws = await seedWorkspace(deployment.db, contractFixture(`Logs ${store}`, 1));
    await get(one.url, ws.fullKey);
    await get(two.url, `${ws.fullKey.slice(0, -1)}${ws.fullKey.endsWith('x') ? 'y' : 'x'}`);
    for (const server of [one, two]) {
      expect(server.output()).toContain('"msg":"request"');
      expect(server.output()).not.toMatch(/svc_api_[0-9A-Za-z]{6,}|svc_cal_[0-9A-Za-z]{6,}|whsec_/);
    }
  });
});

describeOnEachDatabase('graceful shutdown on %s', (target) => {
  it('SIGTERM under load: every request in flight completes, the process exits 0', async () => {
    const deployment = await openSharedDatabase(target, 20);
    try {
      const ws = await seedWorkspace(deployment.db, contractFixture('Shutdown', 20));
      const server = await startServerProcess({ ...deployment.env, RATE_LIMIT_MAX: '100000', SHUTDOWN_DRAIN_MS: '300' });
      const outcomes: Array<{ status: number } | { error: string; sent: boolean }> = [];
      let stopping = false;
      const loop = async () => {
        while (!stopping) outcomes.push(await get(server.url, ws.fullKey));
      };
      const loops = Array.from({ length: 16 }, loop);
      // Stopped under load once the loops are answered, however long the cold process's first build takes.
      await vi.waitUntil(() => outcomes.length >= 32, { timeout: 15_000, interval: 50 });
      // From SIGTERM on no new request starts; every one already sent must complete.
      const exited = server.stop();
      stopping = true;
      await Promise.all(loops);
      const code = await exited;
      expect(code).toBe(0);
      const served = outcomes.filter((outcome) => 'status' in outcome);
      expect(served.length).toBeGreaterThan(20);
      expect(served.every((outcome) => outcome.status === 200)).toBe(true);
      expect(outcomes.filter((outcome) => 'error' in outcome)).toEqual([]);
    } finally {
      await deployment.close();
    }
  });
});
