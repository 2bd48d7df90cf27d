import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { POSTGRES_BIN, ThrowawayCluster } from '../support/throwaway-cluster.ts';
import { describeWhere } from '../support/variants.ts';

describeWhere(POSTGRES_BIN ? null : 'no PostgreSQL server binaries under /usr/lib/postgresql', 'PostgreSQL stopped and started under load', () => {
  let cluster: ThrowawayCluster;
  let server: ServerProcess;
  let ws: SeededWorkspace;
  /** The 200s the loads of the test below got. */
  let answered = 0;

  beforeAll(async () => {
    cluster = await ThrowawayCluster.create('pg-outage-');
    const db = await openDatabase({ url: cluster.url });
    await migrate(db);
    ws = await seedWorkspace(db, contractFixture('Outage', 5));
    await db.close();
    server = await startServerProcess({ DATABASE_URL: cluster.url, RATE_LIMIT_MAX: '1000000', DB_STATEMENT_TIMEOUT_MS: '2000' });
  });
  afterAll(async () => {
    await server?.stop();
    await cluster?.destroy();
  });

  it('http.unavailable: answers 503 service_unavailable while it is down (never hangs, never crashes) and 200 again within 5 s after it returns', async () => {
    const outcomes: Array<{ at: number; status: number; ms: number; body: string }> = [];
    let running = true;
    const loop = async () => {
      while (running) {
        const started = Date.now();
        const response = await fetch(`${server.url}/api/public/v1/courses`, { headers: { Authorization: `Bearer ${ws.fullKey}` } });
        outcomes.push({ at: Date.now(), status: response.status, ms: Date.now() - started, body: await response.text() });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const loops = Array.from({ length: 4 }, loop);
    // The first answer builds the cache on a cold process, which can take longer than a fixed pause on
    // a loaded machine; PostgreSQL is stopped once the loops have had eight answers.
    await vi.waitUntil(() => outcomes.length >= 8, { timeout: 15_000, interval: 50 });
    const stoppingAt = Date.now();
    await cluster.stop();
    const stoppedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const startingAt = Date.now();
    await cluster.start();
    const startedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 5000));
    running = false;
    await Promise.all(loops);

    const before = outcomes.filter((outcome) => outcome.at < stoppingAt);
    // Once the key cache (under 1 s) has expired, every answer while it is down is 503.
    const down = outcomes.filter((outcome) => outcome.at > stoppedAt + 1000 && outcome.at < startingAt);
    const after = outcomes.filter((outcome) => outcome.at > startedAt);
    expect(before.length).toBeGreaterThan(0);
    expect(before.filter((outcome) => outcome.status !== 200).map((o) => `${o.status} ${o.body}`)).toEqual([]);
    expect(down.length).toBeGreaterThan(0);
    for (const outcome of down) {
      expect(outcome.status).toBe(503);
      expect(JSON.parse(outcome.body)).toEqual({ error: { code: 'service_unavailable', message: expect.any(String) } });
    }
    expect(Math.max(...outcomes.map((outcome) => outcome.ms))).toBeLessThan(6000);
    expect(outcomes.filter((outcome) => outcome.status !== 200 && outcome.status !== 503).map((o) => `${o.status} ${o.body}`)).toEqual([]);
    const firstOk = after.find((outcome) => outcome.status === 200);
    expect(firstOk, 'a 200 after PostgreSQL returned').toBeDefined();
    expect(firstOk!.at - startedAt).toBeLessThan(5000);
    expect(after.filter((outcome) => outcome.at > firstOk!.at).every((outcome) => outcome.status === 200)).toBe(true);
    expect(server.child.exitCode).toBeNull();
    answered = outcomes.filter((outcome) => outcome.status === 200).length;
  });

  it("loses none of the key's daily counts to the outage: the ones collected while it was down are written after it", async () => {
    const db = await openDatabase({ url: cluster.url });
    try {
      const counted = async () =>
        (await db.query<{ n: string }>('SELECT coalesce(sum(u.status_2xx), 0) AS n FROM api_key_usage u JOIN api_keys k ON k.id = u.api_key_id WHERE k.last4 = $1', [ws.fullKey.slice(-4)])).rows[0]!.n;
      expect(answered).toBeGreaterThan(8);
      // Every 200 of the test above, before and after the outage, is in the key's count for the day.
      await vi.waitUntil(async () => Number(await counted()) === answered, { timeout: 5000, interval: 100 });
    } finally {
      await db.close();
    }
  });
});

