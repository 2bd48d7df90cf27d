import { afterAll, beforeAll, expect, it } from 'vitest';
import type { components } from '../../src/contract/public-v1-types.ts';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type ReceivedDelivery, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { bookingOf, insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

type Event = components['schemas']['BookingCreatedEvent'] | components['schemas']['BookingUpdatedEvent'];

interface Listed {
  id: string;
  state: string;
  disabledAt: string | null;
  disabledReason: string | null;
}
interface Logged {
  eventId: string;
  eventType: string;
  test: boolean;
  state: string;
  attempts: number;
  log: Array<{ manual: boolean; number: number | null; httpStatus: number | null; error: string | null }>;
}

/** Three seconds, in days: an endpoint whose attempts all failed for that long is disabled. */
const DISABLE_AFTER_MS = 3_000;
const CONCURRENCY = 2;

describeOnEachDatabase('test events and receivers that answer 410 Gone on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let receiver: WebhookReceiver;
  let endpoint: { id: string; secret: string };
  const env = webhookEnv({ WEBHOOK_DISABLE_AFTER_DAYS: String(DISABLE_AFTER_MS / 86_400_000), WEBHOOK_CONCURRENCY: String(CONCURRENCY) });
  const cli = () => cliOn(db, env, receiver);
  const stateOf = async (id: string) => (await cli().json<Listed[]>('webhook', 'list', '--workspace', ws.workspaceId)).find((e) => e.id === id)!;
  const logOf = async (id: string) => cli().json<Logged[]>('webhook', 'deliveries', '--endpoint', id);
  const eventOf = (delivery: ReceivedDelivery) => JSON.parse(delivery.body) as Event;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Gone', 3));
    receiver = await startReceiver();
    endpoint = await cliOn(db, env).json('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url, '--participants', '--events', 'booking.created,booking.updated');
    receiver.checkWith([endpoint.secret]);
    api = await startTestApi(db, env, { trustedCertificates: [receiver.certificate] });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await db?.close();
  });

  it('webhooks.test-events: webhook test sends one signed event at once ("test": true, an example booking bkg_test_…) and prints the status, the time and the start of the answer', async () => {
    receiver.answer = () => ({ status: 200, body: `{"received":true}\u001b[2J${'x'.repeat(300)}` });
    for (const type of ['booking.created', 'booking.updated'] as const) {
      const sent = await cli().json<{ event: string; type: string; ok: boolean; httpStatus: number; startedAt: string; durationMs: number; answerStart: string }>(
        'webhook', 'test', '--endpoint', endpoint.id, ...(type === 'booking.created' ? [] : ['--type', type]),
      );
      expect(sent).toMatchObject({ type, ok: true, httpStatus: 200 });
      expect(sent.answerStart).toBe(`{"received":true}\u001b[2J${'x'.repeat(200 - 21)}`);
      expect(Date.now() - Date.parse(sent.startedAt)).toBeLessThan(10_000);
      const delivery = receiver.received.find((d) => d.headers['webhook-id'] === sent.event)!;
      const event = eventOf(delivery);
      expect(event).toMatchObject({ id: sent.event, type, test: true, data: { booking: { participant: { name: 'Test Participant' } } } });
      expect(event.data.booking.id).toMatch(/^bkg_test_[0-9a-f]{32}$/);
      if (event.type === 'booking.updated') expect(event.data.previous).toEqual({ status: 'pending', updatedAt: event.data.booking.createdAt });
    }
    // The text names what was sent and how it was answered; the answer is quoted, control characters and all escaped.
    const text = await cli().run('webhook', 'test', '--endpoint', endpoint.id);
    expect(text.stdout).toMatch(
      new RegExp(String.raw`^Test booking\.created event evt_[0-9a-f]{32}: Delivered \(HTTP 200\) at \S+Z in \d+ ms; the receiver answered "\{\\"received\\":true\}\\u001b\[2Jx+"\n$`),
    );
    expect(text.stdout).not.toContain('\u001b');
    expect(receiver.problems).toEqual([]);
  });

  it('webhooks.test-events: a test event is in the delivery log as a test with one attempt, is never retried or sent again by hand, and counts toward nothing that disables the endpoint, a 410 included', async () => {
    receiver.answer = () => ({ status: 500 });
    // A failed attempt is printed as any other, and the exit says it failed.
    const failedTest = async (...argv: string[]) => {
      const result = await cli().run('webhook', 'test', '--endpoint', endpoint.id, ...argv, '--json');
      expect(result.code).toBe(1);
      return JSON.parse(result.stdout) as { event: string; ok: boolean; httpStatus: number; error: string; hint: string | null };
    };
    const failed = await failedTest('--type', 'booking.updated');
    // The receiver's own answer needs no hint.
    expect(failed).toMatchObject({ ok: false, httpStatus: 500, error: 'http_status', hint: null });
    receiver.answer = () => ({ status: 410 });
    const gone = await failedTest();
    expect(gone).toMatchObject({ httpStatus: 410, error: 'gone' });
    expect(await stateOf(endpoint.id)).toMatchObject({ state: 'active', disabledReason: null });

    // Longer than WEBHOOK_DISABLE_AFTER_DAYS after the failed test: were it counted, the endpoint would now be failing that long.
    await new Promise((resolve) => setTimeout(resolve, DISABLE_AFTER_MS + 100));
    receiver.answer = () => ({ status: 503 });
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await expect.poll(async () => (await logOf(endpoint.id)).find((d) => !d.test && d.state === 'failed'), { timeout: 15_000, interval: 200 }).toBeDefined();
    expect(receiver.received.filter((d) => !eventOf(d).test && bookingOf(d).id === bookingId)).toHaveLength(8);
    expect(await stateOf(endpoint.id)).toMatchObject({ state: 'active' });

    const log = await logOf(endpoint.id);
    for (const sent of [failed, gone]) {
      expect(log.find((d) => d.eventId === sent.event)).toMatchObject({ test: true, state: 'failed', attempts: 0, log: [{ manual: true, number: null, httpStatus: sent.httpStatus }] });
      expect(receiver.received.filter((d) => d.headers['webhook-id'] === sent.event)).toHaveLength(1);
    }
    const again = await cli().run('webhook', 'redeliver', '--event', failed.event, '--endpoint', endpoint.id);
    expect([again.code, again.stderr]).toEqual([1, `error: Event ${failed.event} is a test event, which is never sent again; send a new one with webhook test --endpoint ${endpoint.id}\n`]);
    const unknownType = await cli().run('webhook', 'test', '--endpoint', endpoint.id, '--type', 'booking.deleted');
    expect([unknownType.code, unknownType.stderr]).toEqual([1, 'error: --type names unknown event type(s) "booking.deleted"; the types are booking.created, booking.updated\n']);
    expect(receiver.problems).toEqual([]);
  });

  it('webhooks.gone: an attempt answered 410 disables the endpoint at once (reason gone, in webhook list, the log and the metrics): no further attempt of any event until webhook enable, which resumes them', async () => {
    receiver.answer = () => ({ status: 410 });
    const firstSeen = receiver.received.length;
    // Twelve bookings in one statement: all are recorded before the first attempt.
    const inserted = await db.query<{ id: string }>(
      "INSERT INTO bookings (workspace_id, course_run_id, source, status) SELECT $1, $2, 'api', 'confirmed' FROM generate_series(1, 12) RETURNING id",
      [ws.workspaceId, ws.ids.r2],
    );
    const bookings = inserted.rows.map((row) => row.id);
    await expect.poll(async () => (await stateOf(endpoint.id)).disabledReason, { timeout: 15_000, interval: 100 }).toBe('gone');
    expect(await stateOf(endpoint.id)).toMatchObject({ state: 'disabled', disabledReason: 'gone' });
    expect((await cli().run('webhook', 'list', '--workspace', ws.workspaceId)).stdout).toMatch(/disabled since \S+ \(gone: its receiver answered 410\)/);
    // Attempts already under way when the first 410 was recorded may finish; none starts after
    // (retries are due 100 ms after a failure here).
    await new Promise((resolve) => setTimeout(resolve, 600));
    const attempts = receiver.received.length - firstSeen;
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(attempts).toBeLessThanOrEqual(CONCURRENCY);
    // A booking recorded while disabled is kept for `recover`, not sent.
    const since = new Date(Date.now() - 1).toISOString();
    const meanwhile = await insertBooking(db, ws.workspaceId, ws.ids.r2!);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received.length - firstSeen).toBe(attempts);
    const gone = (await logOf(endpoint.id)).flatMap((d) => d.log).filter((a) => a.httpStatus === 410 && !a.manual);
    expect(gone.map((a) => a.error)).toEqual(Array(attempts).fill('gone'));
    expect(api.logs.some((line) => /"level":40/.test(line) && line.includes(endpoint.id) && line.includes('"reason":"gone"') && line.includes('410 Gone'))).toBe(true);
    const metrics = await (await fetch(`${api.server.internalUrl}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
    expect(metrics).toMatch(/^webhook_attempts_total\{outcome="gone"\} [1-9]\d*$/m);
    expect(metrics).toMatch(/^webhook_endpoints_disabled_total 1$/m);

    receiver.answer = () => ({ status: 204 });
    const enabledAt = receiver.received.length;
    expect(await cli().json('webhook', 'enable', '--endpoint', endpoint.id)).toMatchObject({ id: endpoint.id, state: 'active' });
    expect(await stateOf(endpoint.id)).toMatchObject({ state: 'active', disabledAt: null, disabledReason: null });
    const delivered = (id: string) => receiver.received.slice(enabledAt).some((d) => bookingOf(d).id === id);
    await receiver.waitFor(() => bookings.every(delivered), 15_000);
    expect(delivered(meanwhile)).toBe(false);
    expect(await cli().json('webhook', 'recover', '--endpoint', endpoint.id, '--since', since)).toMatchObject({ recovered: 1 });
    await receiver.waitFor(() => delivered(meanwhile), 15_000);
    expect(receiver.problems).toEqual([]);
  });

  it('webhooks.gone: a manual redelivery answered 410 disables the endpoint too, and says so', async () => {
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await receiver.waitFor((received) => received.some((d) => !eventOf(d).test && bookingOf(d).id === bookingId));
    const eventId = String(receiver.received.find((d) => !eventOf(d).test && bookingOf(d).id === bookingId)!.headers['webhook-id']);
    // Until its success is recorded the scheduled attempt holds the delivery, and a redelivery is refused.
    await expect.poll(async () => (await logOf(endpoint.id)).find((d) => d.eventId === eventId)?.state, { timeout: 10_000, interval: 100 }).toBe('succeeded');
    receiver.answer = () => ({ status: 410, body: 'subscription deleted' });
    const again = await cli().run('webhook', 'redeliver', '--event', eventId, '--endpoint', endpoint.id);
    // The attempt was made and failed: what it printed stands, and the exit says it failed.
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/^Failed: gone \(HTTP 410\) at \S+ in \d+ ms; the receiver answered "subscription deleted"\nThe receiver answered 410 Gone: the endpoint is disabled/);
    expect(await stateOf(endpoint.id)).toMatchObject({ state: 'disabled', disabledReason: 'gone' });
    receiver.answer = () => ({ status: 204 });
    // A test may check the receiver of a disabled endpoint before it is enabled again; it stays disabled.
    const checked = await cli().run('webhook', 'test', '--endpoint', endpoint.id);
    expect(checked.stdout).toMatch(/Delivered \(HTTP 204\)[^\n]*\nThe endpoint is still disabled \(webhook enable --endpoint whe_[0-9a-f]{32}\)\n$/);
    expect(await stateOf(endpoint.id)).toMatchObject({ state: 'disabled', disabledReason: 'gone' });
    await cli().json('webhook', 'enable', '--endpoint', endpoint.id);
    const removed = await cliOn(db, env).json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url);
    await cli().json('webhook', 'remove', '--id', removed.id);
    const refused = await cli().run('webhook', 'test', '--endpoint', removed.id);
    expect([refused.code, refused.stderr]).toEqual([1, `error: Webhook endpoint ${removed.id} has been removed\n`]);
    expect(receiver.problems).toEqual([]);
  });
});
