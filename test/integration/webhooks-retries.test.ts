import { afterAll, beforeAll, expect, it } from 'vitest';
import type { components } from '../../src/contract/public-v1-types.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type Answer, type ReceivedDelivery, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const DELAYS = [100, 150, 200, 250, 300, 350, 400];

interface Delivery {
  eventId: string;
  state: string;
  attempts: number;
  nextAttemptAt: string | null;
  log: Array<{ number: number | null; manual: boolean; httpStatus: number | null; error: string | null; nextAttemptAt: string | null; durationMs: number }>;
}

const participantOf = (d: ReceivedDelivery) =>
  (JSON.parse(d.body) as components['schemas']['BookingCreatedEvent']).data.booking.participant?.name ?? '';

describeOnEachDatabase('webhook attempts and retries on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let receiver: WebhookReceiver;
  let redirectTarget: WebhookReceiver;
  let endpointId: string;
  const env = webhookEnv({ WEBHOOK_RETRY_DELAYS_MS: DELAYS.join(','), WEBHOOK_TIMEOUT_MS: '1500' });
  const cli = () => cliOn(db, env, receiver);

  /** The receiver's answer depends on the scenario named by the booking's participant. */
  const scenarios: Record<string, (attempt: number) => Answer> = {
    'Always Failing': () => ({ status: 500 }),
    'Redirected Once': (attempt) => (attempt === 1 ? { status: 302, headers: { location: redirectTarget.url } } : { status: 204 }),
    'Slow Once': (attempt) => (attempt === 1 ? { status: 204, delayMs: 4000 } : { status: 204 }),
  };

  const attemptsOf = (name: string) => receiver.received.filter((d) => participantOf(d) === name);
  const book = (name: string) => insertBooking(db, ws.workspaceId, ws.ids.r1!, { name, email: 'person@example.com' });
  const deliveriesOf = async (eventId: string) => (await cli().json<Delivery[]>('webhook', 'deliveries', '--endpoint', endpointId, '--event', eventId))[0]!;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Retries', 1));
    redirectTarget = await startReceiver();
    receiver = await startReceiver((delivery) => {
      const scenario = scenarios[participantOf(delivery)];
      const attempt = attemptsOf(participantOf(delivery)).length;
      return scenario ? scenario(attempt) : { status: 204 };
    });
    endpointId = (await cli().json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url, '--participants')).id;
    api = await startTestApi(db, env, { trustedCertificates: [receiver.certificate] });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await redirectTarget?.close();
    await db?.close();
  });

  it('webhooks.schedule: a receiver answering 500 gets exactly 8 attempts, spaced by the configured delays, then the delivery is failed and later events still go out', async () => {
    await book('Always Failing');
    await receiver.waitFor(() => attemptsOf('Always Failing').length >= 8);
    const eventId = String(attemptsOf('Always Failing')[0]!.headers['webhook-id']);
    // Time for a ninth attempt, were there one: more than the longest delay.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const attempts = attemptsOf('Always Failing');
    expect(attempts).toHaveLength(8);
    expect(new Set(attempts.map((d) => d.headers['webhook-id']))).toEqual(new Set([eventId]));
    expect(new Set(attempts.map((d) => d.body)).size).toBe(1);
    const gaps = attempts.slice(1).map((d, i) => d.at - attempts[i]!.at);
    gaps.forEach((gap, i) => expect(gap, `gap before attempt ${i + 2}`).toBeGreaterThanOrEqual(DELAYS[i]! - 5));

    const delivery = await deliveriesOf(eventId);
    expect(delivery).toMatchObject({ eventId, state: 'failed', attempts: 8, nextAttemptAt: null });
    expect(delivery.log.map((a) => a.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(delivery.log.every((a) => a.httpStatus === 500 && a.error === 'http_status' && a.durationMs >= 0)).toBe(true);
    expect(delivery.log.slice(0, 7).every((a) => a.nextAttemptAt !== null)).toBe(true);
    expect(delivery.log[7]!.nextAttemptAt).toBeNull();

    await book('After The Failure');
    await receiver.waitFor(() => attemptsOf('After The Failure').length === 1);
    expect(attemptsOf('Always Failing')).toHaveLength(8);
  });

  it('webhooks.failed-attempt: a 3xx answer counts as a failed attempt and the redirect is not followed', async () => {
    await book('Redirected Once');
    await receiver.waitFor(() => attemptsOf('Redirected Once').length === 2);
    const eventId = String(attemptsOf('Redirected Once')[0]!.headers['webhook-id']);
    // The receiver has the second attempt before the worker has recorded its answer.
    await expect.poll(async () => (await deliveriesOf(eventId)).state).toBe('succeeded');
    const delivery = await deliveriesOf(eventId);
    expect(delivery.log.map((a) => [a.httpStatus, a.error])).toEqual([
      [302, 'redirect'],
      [204, null],
    ]);
    expect(redirectTarget.received).toEqual([]);
  });

  it('webhooks.failed-attempt: an answer slower than the timeout counts as a failed attempt', async () => {
    await book('Slow Once');
    await receiver.waitFor(() => attemptsOf('Slow Once').length === 2);
    const eventId = String(attemptsOf('Slow Once')[0]!.headers['webhook-id']);
    await expect.poll(async () => (await deliveriesOf(eventId)).state).toBe('succeeded');
    const delivery = await deliveriesOf(eventId);
    expect(delivery.log.map((a) => [a.httpStatus, a.error])).toEqual([
      [null, 'timeout'],
      [204, null],
    ]);
    expect(delivery.log[0]!.durationMs).toBeGreaterThanOrEqual(1400);
  });

  it('webhook redeliver makes one manual attempt outside the 8 and logs it', async () => {
    const eventId = String(attemptsOf('Always Failing')[0]!.headers['webhook-id']);
    scenarios['Always Failing'] = () => ({ status: 200 });
    const outcome = await cli().json('webhook', 'redeliver', '--event', eventId, '--endpoint', endpointId);
    expect(outcome).toMatchObject({ ok: true, httpStatus: 200, error: null });
    expect(attemptsOf('Always Failing')).toHaveLength(9);
    const delivery = await deliveriesOf(eventId);
    expect(delivery).toMatchObject({ state: 'succeeded', attempts: 8 });
    expect(delivery.log).toHaveLength(9);
    expect(delivery.log[8]).toMatchObject({ number: null, manual: true, httpStatus: 200, error: null });

    const unknown = await cli().run('webhook', 'redeliver', '--event', 'evt_missing', '--endpoint', endpointId);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/^error: Event "evt_missing" has no delivery to endpoint/);
  });
});
