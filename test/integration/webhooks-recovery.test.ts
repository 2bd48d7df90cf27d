import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { bookingOf, insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

interface Delivery {
  eventId: string;
  state: string;
  attempts: number;
  series: number;
  log: Array<{ series: number; number: number | null; error: string | null }>;
}

/** Four seconds, in days: an endpoint failing that long is disabled. */
const DISABLE_AFTER_MS = 4_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeOnEachDatabase('endpoints that keep failing, and recovering their events, on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let receiver: WebhookReceiver;
  let endpointId: string;
  let healthy = false;
  // One attempt at a time, so that the receiver sees recovered events in the order they were sent.
  const env = webhookEnv({ WEBHOOK_DISABLE_AFTER_DAYS: String(DISABLE_AFTER_MS / 86_400_000), WEBHOOK_CONCURRENCY: '1' });
  const cli = () => cliOn(db, env, receiver);
  const deliveries = () => cli().json<Delivery[]>('webhook', 'deliveries', '--endpoint', endpointId);
  const eventOf = async (bookingId: string) =>
    (await db.query<{ id: string }>('SELECT id FROM webhook_events WHERE booking_id = $1', [bookingId])).rows[0]!.id;
  const deliveryOf = async (eventId: string) => (await deliveries()).find((d) => d.eventId === eventId)!;
  const stateOf = async () => (await cli().json<Array<{ id: string; state: string; disabledAt: string | null }>>('webhook', 'list', '--workspace', ws.workspaceId)).find((e) => e.id === endpointId)!;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Recovery', 1));
    receiver = await startReceiver(() => ({ status: healthy ? 204 : 503 }));
    endpointId = (await cli().json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url)).id;
    api = await startTestApi(db, env, { trustedCertificates: [receiver.certificate] });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await db?.close();
  });

  const failed: string[] = [];
  let since = '';

  it('disables an endpoint once every attempt to it has failed for WEBHOOK_DISABLE_AFTER_DAYS, with a warning line and a metric; it then gets nothing, and webhook list shows it', async () => {
    const started = Date.now();
    // Fails all 8 attempts within a second or two: too short a failure to disable the endpoint.
    failed.push(await eventOf(await insertBooking(db, ws.workspaceId, ws.ids.r1!)));
    await expect.poll(async () => (await deliveryOf(failed[0]!)).state, { timeout: 15_000 }).toBe('failed');
    expect((await stateOf()).state).toBe('active');

    await sleep(started + DISABLE_AFTER_MS + 200 - Date.now());
    since = new Date().toISOString();
    await sleep(10);
    failed.push(await eventOf(await insertBooking(db, ws.workspaceId, ws.ids.r1!)));
    await expect.poll(async () => (await stateOf()).state, { timeout: 15_000 }).toBe('disabled');
    expect(await deliveryOf(failed[1]!)).toMatchObject({ state: 'failed', attempts: 8 });
    expect((await stateOf()).disabledAt).not.toBeNull();
    expect(api.logs.some((line) => /"level":40/.test(line) && line.includes(endpointId) && line.includes('webhook endpoint disabled'))).toBe(true);
    const metrics = await (await fetch(`${api.server.internalUrl}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
    expect(metrics).toMatch(/^webhook_endpoints_disabled_total 1$/m);

    // While disabled: nothing is sent, and a manual redelivery is refused.
    const seen = receiver.received.length;
    failed.push(await eventOf(await insertBooking(db, ws.workspaceId, ws.ids.r1!)));
    await sleep(600);
    expect(receiver.received).toHaveLength(seen);
    expect(await deliveryOf(failed[2]!)).toMatchObject({ state: 'failed', attempts: 0, log: [] });
    const refused = await cli().run('webhook', 'redeliver', '--event', failed[1]!, '--endpoint', endpointId);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toBe(`error: Webhook endpoint ${endpointId} is disabled; enable it first (webhook enable --endpoint ${endpointId})\n`);
    const recoverRefused = await cli().run('webhook', 'recover', '--endpoint', endpointId, '--since', since);
    expect(recoverRefused.code).not.toBe(0);
    expect(recoverRefused.stderr).toBe(`error: Webhook endpoint ${endpointId} is disabled; enable it first (webhook enable --endpoint ${endpointId})\n`);
  });

  it('webhook enable turns it back on: new events are delivered again', async () => {
    healthy = true;
    expect(await cli().json('webhook', 'enable', '--endpoint', endpointId)).toEqual({ id: endpointId, state: 'active', resumed: 0 });
    expect((await stateOf())).toMatchObject({ state: 'active', disabledAt: null });
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await receiver.waitFor((received) => received.some((d) => bookingOf(d).id === bookingId));
    await expect.poll(async () => (await deliveryOf(await eventOf(bookingId))).state).toBe('succeeded');
  });

  it('webhook recover re-sends exactly the failed events since the given time, as new attempt series with their webhook-id, in creation order', async () => {
    const before = receiver.received.length;
    const storedBody = (await db.query<{ body: string }>('SELECT body FROM webhook_deliveries WHERE event_id = $1', [failed[1]])).rows[0]!.body;
    const result = await cli().json('webhook', 'recover', '--endpoint', endpointId, '--since', since);
    expect(result).toEqual({ endpoint: endpointId, since, recovered: 2 });
    await receiver.waitFor((received) => received.length >= before + 2);
    await sleep(300);
    const resent = receiver.received.slice(before);
    // The one that failed before `since` and the one that succeeded are not sent again.
    expect(resent.map((d) => d.headers['webhook-id'])).toEqual([failed[1], failed[2]]);
    expect(resent[0]!.body).toBe(storedBody);
    for (const eventId of [failed[1]!, failed[2]!]) {
      await expect.poll(async () => (await deliveryOf(eventId)).state).toBe('succeeded');
    }
    const recovered = await deliveryOf(failed[1]!);
    expect(recovered).toMatchObject({ series: 2, attempts: 1 });
    expect(recovered.log.map((a) => [a.series, a.number])).toEqual([...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => [1, n]), [2, 1]]);
    expect(await deliveryOf(failed[0]!)).toMatchObject({ state: 'failed', series: 1 });

    // Nothing is left to recover.
    expect(await cli().json('webhook', 'recover', '--endpoint', endpointId, '--since', since)).toMatchObject({ recovered: 0 });
  });

  it('webhook recover refuses a bad time or an unknown endpoint with a clear message and a non-zero exit', async () => {
    for (const [args, message] of [
      [['--endpoint', endpointId, '--since', 'yesterday'], /--since "yesterday" is not an ISO 8601 time/],
      [['--endpoint', endpointId, '--since', '2026-02-30T00:00:00Z'], /is not an ISO 8601 time/],
      [['--endpoint', endpointId, '--since', '2999-01-01T00:00:00Z'], /is in the future/],
      [['--endpoint', 'whe_missing', '--since', since], /No webhook endpoint with id "whe_missing"/],
      [['--endpoint', endpointId], /required option '--since <ISO time>' not specified/],
    ] as const) {
      const result = await cli().run('webhook', 'recover', ...args);
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
    const unknown = await cli().run('webhook', 'enable', '--endpoint', 'whe_missing');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/No webhook endpoint with id "whe_missing"/);
  });
});
