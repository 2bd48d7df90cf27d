import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

interface Delivery {
  eventId: string;
  state: string;
  log: Array<{ startedAt: string; nextAttemptAt: string | null }>;
}

const EVENTS = 12;

/** How late each retry started after its due time (ms), ascending. */
function lateness(deliveries: Delivery[]): number[] {
  return deliveries.map((d) => Date.parse(d.log[1]!.startedAt) - Date.parse(d.log[0]!.nextAttemptAt!)).sort((a, b) => a - b);
}

describeOnEachDatabase('retries on time on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let receiver: WebhookReceiver;
  let endpointId: string;
  // The queue's own poll is left at 2 s: a retry must not wait for it.
  const env = webhookEnv({ WEBHOOK_POLL_INTERVAL_MS: '2000', WEBHOOK_RETRY_DELAYS_MS: '900,900,900,900,900,900,900' });

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Punctual', 1));
    // Each event's first attempt fails; its retry succeeds.
    receiver = await startReceiver((delivery) =>
      receiver.received.filter((d) => d.headers['webhook-id'] === delivery.headers['webhook-id']).length === 1 ? { status: 503 } : { status: 204 },
    );
    endpointId = (await cliOn(db, env).json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url)).id;
    api = await startTestApi(db, env, { trustedCertificates: [receiver.certificate] });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await db?.close();
  });

  it('webhooks.schedule: a scheduled retry starts within 1 s of its due time, not at the queue\'s next 2 s poll', async () => {
    for (let i = 0; i < EVENTS; i += 1) {
      await insertBooking(db, ws.workspaceId, ws.ids.r1!);
      await new Promise((resolve) => setTimeout(resolve, 170));
    }
    const deliveries = () => cliOn(db, env).json<Delivery[]>('webhook', 'deliveries', '--endpoint', endpointId);
    await expect.poll(async () => (await deliveries()).filter((d) => d.state === 'succeeded').length, { timeout: 30_000, interval: 250 }).toBe(EVENTS);
    const late = lateness(await deliveries());
    expect(late).toHaveLength(EVENTS);
    // Never early: a claim needs the delivery to be due.
    expect(late[0]).toBeGreaterThanOrEqual(0);
    expect(late.at(-1)).toBeLessThan(1_000);
  });
});
