import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { selfSignedCertificate, startReceiver, type ReceivedDelivery, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { bookingOf, insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

interface Delivery {
  eventId: string;
  state: string;
  log: Array<{ number: number | null; httpStatus: number | null; error: string | null }>;
}

/**
 * 50 deliveries to receivers built on Node's own `https.createServer` with its default settings:
 * it announces `Keep-Alive: timeout=5` and closes an idle connection 5 s later (6 s on Node
 * versions that add a 1 s grace). Rather than one receiver taking 50 deliveries one after another
 * (4.5 minutes), ten receivers on their own ports take five each, at the same time, every
 * booking 4.5–6 s after the previous answer of the same receiver. A pooled connection is lost
 * when it is reused at the moment the receiver closes it, so most gaps are put just before 6 s:
 * with the delivery's own latency on top, their requests leave as the receiver closes. (Without
 * the keep-alive rules of src/webhooks/send-attempt.ts, 1 to 5 of the 50 fail on their first attempt.)
 */
const RECEIVERS = 10;
const GAPS_MS = Array.from({ length: RECEIVERS }, (_, r) => [4_500 + 150 * r, 5_950 + 5 * r, 5_970 + 3 * r, 5_985 + Math.round(1.5 * r)]);

const sleepUntil = (time: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, time - Date.now())));

describeOnEachDatabase('webhook connections to receivers that close idle keep-alive connections on %s', (target) => {
  let db: Database;
  let api: TestApi;
  const env = webhookEnv({ WEBHOOK_POLL_INTERVAL_MS: '25', WEBHOOK_CONCURRENCY: '10' });
  const cli = () => cliOn(db, env);
  const closers: Array<() => Promise<void>> = [];

  const addEndpoint = async (ws: SeededWorkspace, receiver: WebhookReceiver) =>
    (await cli().json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url)).id;
  const receiverWith = async (...args: Parameters<typeof startReceiver>) => {
    const receiver = await startReceiver(...args);
    closers.push(() => receiver.close());
    return receiver;
  };
  const deliveriesOf = (endpointId: string) => cli().json<Delivery[]>('webhook', 'deliveries', '--endpoint', endpointId);

  beforeAll(async () => {
    db = await openTestDatabase(target);
    api = await startTestApi(db, env, { trustedCertificates: [(await selfSignedCertificate()).cert] });
  });
  afterAll(async () => {
    await api?.close();
    for (const close of closers) await close();
    await db?.close();
  });

  it('a receiver with Node\'s default keep-alive timeout gets 50 deliveries spaced 4.5–6 s apart, each a first-attempt success', async () => {
    const setups = await Promise.all(
      GAPS_MS.map(async (_, r) => {
        const ws = await seedWorkspace(db, contractFixture(`KeepAlive${r}`, 1));
        const receiver = await receiverWith();
        return { ws, receiver, endpointId: await addEndpoint(ws, receiver) };
      }),
    );
    const arrivalOf = (receiver: WebhookReceiver, bookingId: string) => receiver.received.find((d) => bookingOf(d).id === bookingId);
    const spacings: number[] = [];
    await Promise.all(
      setups.map(async ({ ws, receiver }, r) => {
        let previous: ReceivedDelivery | undefined;
        for (const gap of [0, ...GAPS_MS[r]!]) {
          if (previous) await sleepUntil(previous.answeredAt! + gap);
          const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
          await receiver.waitFor(() => arrivalOf(receiver, bookingId)?.answeredAt != null, 20_000);
          const arrival = arrivalOf(receiver, bookingId)!;
          if (previous) spacings.push(arrival.at - previous.answeredAt!);
          previous = arrival;
        }
      }),
    );
    expect(spacings).toHaveLength(RECEIVERS * 4);
    // Every connection sat idle past the safe idle time: no delivery came sooner than 4.5 s after the last.
    expect(Math.min(...spacings)).toBeGreaterThanOrEqual(4_400);

    // An answered attempt is recorded just after its answer: the last ones may still be on their way.
    const recorded = async () => (await Promise.all(setups.map(({ endpointId }) => deliveriesOf(endpointId)))).flat();
    await expect.poll(async () => (await recorded()).filter((d) => d.state !== 'pending').length, { timeout: 10_000 }).toBe(50);
    const deliveries = await recorded();
    expect(deliveries).toHaveLength(50);
    const firstAttemptSuccesses = deliveries.filter((d) => d.state === 'succeeded' && d.log.length === 1 && d.log[0]!.number === 1 && d.log[0]!.error === null);
    expect(firstAttemptSuccesses.length, JSON.stringify(deliveries.filter((d) => !firstAttemptSuccesses.includes(d)))).toBe(50);
  }, 60_000);

  it('reuses a connection within the safe idle time, and honours a shorter Keep-Alive: timeout hint from the receiver', async () => {
    const ws = await seedWorkspace(db, contractFixture('KeepAliveHint', 1));
    // Announces `Keep-Alive: timeout=2`: a connection may then stay idle at most 1 s.
    const hinting = await receiverWith(undefined, { keepAliveTimeout: 2_000 });
    await addEndpoint(ws, hinting);
    const deliverNow = async () => {
      const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
      await hinting.waitFor(() => hinting.received.some((d) => bookingOf(d).id === bookingId && d.answeredAt !== null));
      return hinting.received.find((d) => bookingOf(d).id === bookingId)!;
    };
    const first = await deliverNow();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const soonAfter = await deliverNow();
    expect(soonAfter).toMatchObject({ connection: first.connection, reused: true });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const afterTheHint = await deliverNow();
    expect(afterTheHint.connection).not.toBe(first.connection);
    expect(afterTheHint.reused).toBe(false);
  });

  it('retries once on a fresh connection when a reused connection is closed before any byte of the answer, within the same attempt', async () => {
    const ws = await seedWorkspace(db, contractFixture('KeepAliveStale', 1));
    // Every request that comes on a reused connection finds it closed, as if the receiver had
    // just timed it out.
    const closing = await receiverWith((delivery) => (delivery.reused ? { status: 204, drop: 'before-answer' } : { status: 204 }));
    const endpointId = await addEndpoint(ws, closing);
    const first = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await closing.waitFor((received) => received.some((d) => bookingOf(d).id === first && d.answeredAt !== null));
    const second = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await closing.waitFor((received) => received.some((d) => bookingOf(d).id === second && d.answeredAt !== null));
    const requests = closing.received.filter((d) => bookingOf(d).id === second);
    expect(requests.map((d) => d.reused)).toEqual([true, false]);
    expect(new Set(requests.map((d) => d.body)).size).toBe(1);
    // Recorded just after the answer.
    const logged = async () => (await deliveriesOf(endpointId)).find((d) => d.eventId === requests[0]!.headers['webhook-id'])!;
    await expect.poll(async () => (await logged()).state, { timeout: 10_000 }).not.toBe('pending');
    expect(await logged()).toMatchObject({ state: 'succeeded', log: [{ number: 1, httpStatus: 204, error: null }] });
  });

  it('does not retry when the connection was fresh, or when the answer had begun', async () => {
    const ws = await seedWorkspace(db, contractFixture('KeepAliveNoRetry', 1));
    const dropping = await receiverWith((delivery) =>
      delivery.reused ? { status: 204, drop: 'mid-answer' } : delivery.connection === 1 ? { status: 204 } : { status: 204, drop: 'before-answer' },
    );
    const endpointId = await addEndpoint(ws, dropping);
    // Retries far away, so that only the first attempt of each event is seen.
    const slowRetries = webhookEnv({ WEBHOOK_RETRY_DELAYS_MS: '60000,60000,60000,60000,60000,60000,60000' });
    await api.close();
    api = await startTestApi(db, slowRetries, { trustedCertificates: [(await selfSignedCertificate()).cert] });
    const opened = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await dropping.waitFor((received) => received.some((d) => bookingOf(d).id === opened && d.answeredAt !== null));
    // On the reused connection the status line has begun when it closes: a failed attempt, no second request.
    const midAnswer = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await expect.poll(async () => (await deliveriesOf(endpointId)).find((d) => d.log.length > 0 && dropping.received.some((r) => r.headers['webhook-id'] === d.eventId && bookingOf(r).id === midAnswer))?.log, { timeout: 10_000 }).toMatchObject([{ number: 1, error: 'network' }]);
    expect(dropping.received.filter((d) => bookingOf(d).id === midAnswer)).toHaveLength(1);
    // A fresh connection closed before the answer: a failed attempt, no second request either.
    const fresh = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await expect.poll(async () => (await deliveriesOf(endpointId)).find((d) => dropping.received.some((r) => r.headers['webhook-id'] === d.eventId && bookingOf(r).id === fresh))?.log, { timeout: 10_000 }).toMatchObject([{ number: 1, error: 'network' }]);
    expect(dropping.received.filter((d) => bookingOf(d).id === fresh).map((d) => d.reused)).toEqual([false]);
  });
});
