import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace } from '../support/seed.ts';
import { startFaultyReceiver, type FaultyReceiver, type InFlight } from '../support/faulty-receiver.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { bookingOf, insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeOnEachDatabase('webhook tenants kept apart on %s', (target) => {
  let db: Database;
  const closers: Array<() => Promise<unknown>> = [];
  const env = (overrides: Record<string, string>) => webhookEnv({ WEBHOOK_TIMEOUT_MS: '1000', ...overrides });
  const addEndpoint = async (workspaceId: string, url: string) =>
    (await cliOn(db, webhookEnv()).json<{ id: string }>('webhook', 'add', '--workspace', workspaceId, '--member', OWNER_EMAIL, '--url', url)).id;
  const removeEndpoint = (id: string) => cliOn(db, webhookEnv()).json('webhook', 'remove', '--id', id);

  beforeAll(async () => {
    db = await openTestDatabase(target);
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await db?.close();
  });

  it('a hanging receiver never holds more than its endpoint\'s attempts, nor a workspace more than its own, counted at the receivers', async () => {
    const ws = await seedWorkspace(db, contractFixture('Bounded', 1));
    const shared: InFlight = { now: 0, max: 0 };
    const hanging: FaultyReceiver[] = [await startFaultyReceiver('hang', shared), await startFaultyReceiver('hang', shared)];
    for (const receiver of hanging) closers.push(() => receiver.close());
    const endpoints = [await addEndpoint(ws.workspaceId, hanging[0]!.url), await addEndpoint(ws.workspaceId, hanging[1]!.url)];
    // An attempt counts while its lease (twice the timeout) holds: 2 s leaves a busy machine's late timers room.
    const bounded = { WEBHOOK_TIMEOUT_MS: '2000', WEBHOOK_CONCURRENCY: '12', WEBHOOK_ENDPOINT_CONCURRENCY: '2', WEBHOOK_WORKSPACE_CONCURRENCY: '3' };
    const api = await startTestApi(db, env(bounded), {
      trustedCertificates: [hanging[0]!.certificate],
    });
    closers.push(() => api.close());
    for (let i = 0; i < 8; i += 1) await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    // 16 deliveries and 12 workers: without the bounds every worker would hang on them at once.
    const deadline = Date.now() + 30_000;
    while (hanging[0]!.requests + hanging[1]!.requests < 8 && Date.now() < deadline) await sleep(50);
    await api.close();
    for (const id of endpoints) await removeEndpoint(id);
    expect(hanging[0]!.requests + hanging[1]!.requests).toBeGreaterThanOrEqual(8);
    expect(hanging[0]!.inFlight.max).toBeLessThanOrEqual(2);
    expect(hanging[1]!.inFlight.max).toBeLessThanOrEqual(2);
    // The workspace's bound was reached and never passed.
    expect(shared.max).toBe(3);
  });

  it('an endpoint whose receiver answers gets no more attempts at once than its bound while its successes are recorded, and gets them all', async () => {
    const ws = await seedWorkspace(db, contractFixture('Answering', 1));
    const slow = await startFaultyReceiver('slow');
    closers.push(() => slow.close());
    const endpoint = await addEndpoint(ws.workspaceId, slow.url);
    const api = await startTestApi(db, env({ WEBHOOK_CONCURRENCY: '12', WEBHOOK_ENDPOINT_CONCURRENCY: '2', WEBHOOK_WORKSPACE_CONCURRENCY: '3' }), {
      trustedCertificates: [slow.certificate],
    });
    closers.push(() => api.close());
    for (let i = 0; i < 20; i += 1) await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    const succeeded = async () =>
      (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'succeeded'", [endpoint])).rows[0]!.n;
    const deadline = Date.now() + 30_000;
    while ((await succeeded()) < 20 && Date.now() < deadline) await sleep(100);
    await api.close();
    await removeEndpoint(endpoint);
    expect(await succeeded()).toBe(20);
    expect(slow.requests).toBeGreaterThanOrEqual(20);
    expect(slow.inFlight.max).toBe(2);
  });

  it('noisy neighbour: beside 60 bookings to a receiver that accepts and never answers, another workspace\'s deliveries arrive at once', async () => {
    const noisy = await seedWorkspace(db, contractFixture('Noisy', 1));
    const quiet = await seedWorkspace(db, contractFixture('Quiet', 1));
    const hanging = await startFaultyReceiver('hang');
    closers.push(() => hanging.close());
    const answering: WebhookReceiver = await startReceiver();
    closers.push(() => answering.close());
    const noisyEndpoint = await addEndpoint(noisy.workspaceId, hanging.url);
    await addEndpoint(quiet.workspaceId, answering.url);
    // Fewer places than the hanging receiver's deliveries, each held for the 3 s timeout: without
    // isolation B's first delivery would wait for 60 attempts on 10 places (18 s), the later ones
    // behind A's retries too.
    const api = await startTestApi(
      db,
      env({ WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_CONCURRENCY: '10', WEBHOOK_ENDPOINT_CONCURRENCY: '2', WEBHOOK_WORKSPACE_CONCURRENCY: '4' }),
      { trustedCertificates: [answering.certificate] },
    );
    closers.push(() => api.close());
    for (let i = 0; i < 60; i += 1) await insertBooking(db, noisy.workspaceId, noisy.ids.r1!);
    await sleep(1000);
    const committed = new Map<string, number>();
    for (let i = 0; i < 20; i += 1) {
      const id = await insertBooking(db, quiet.workspaceId, quiet.ids.r1!);
      committed.set(id, Date.now());
      await sleep(150);
    }
    await answering.waitFor((received) => received.length >= 20, 60_000);
    const latencies = answering.received.map((delivery) => delivery.at - committed.get(bookingOf(delivery).id)!).sort((a, b) => a - b);
    // Meanwhile the hanging receiver was still being tried, within its bound, with most of A's deliveries still pending.
    expect(hanging.requests).toBeGreaterThan(2);
    expect(hanging.inFlight.max).toBeLessThanOrEqual(2);
    const pendingOfA = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending'", [noisyEndpoint]);
    expect(pendingOfA.rows[0]!.n).toBeGreaterThan(30);
    await api.close();
    await removeEndpoint(noisyEndpoint);
    expect(latencies).toHaveLength(20);
    // Each of B's arrived long before A's backlog would have let it through without isolation (a
    // loaded machine's polls and timers included); the speed itself is the bench's (webhook-isolation).
    expect(latencies.at(-1), `latencies ${latencies.join(' ')} ms`).toBeLessThan(9000);
  });
});
