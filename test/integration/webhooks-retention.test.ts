import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { bookingOf, insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

interface Delivery {
  eventId: string;
  state: string;
  bodyErasedAt: string | null;
  log: Array<{ number: number | null; httpStatus: number | null }>;
}

/** Two seconds, in days (fractions of a day are allowed for this). */
const RETENTION_MS = 2_000;

describeOnEachDatabase('retention of stored webhook bodies on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let answering: WebhookReceiver;
  let failing: WebhookReceiver;
  const env = webhookEnv({
    WEBHOOK_BODY_RETENTION_DAYS: String(RETENTION_MS / 86_400_000),
    // The failing endpoint's second attempt is far away: its delivery stays pending throughout.
    WEBHOOK_RETRY_DELAYS_MS: '60000,60000,60000,60000,60000,60000,60000',
  });
  const cli = () => cliOn(db, env);

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Retention', 1));
    answering = await startReceiver();
    failing = await startReceiver(() => ({ status: 500 }));
    api = await startTestApi(db, env, { trustedCertificates: [answering.certificate] });
  });
  afterAll(async () => {
    await api?.close();
    await answering?.close();
    await failing?.close();
    await db?.close();
  });

  it('erases stored bodies (participant data) WEBHOOK_BODY_RETENTION_DAYS after the delivery is final, keeps the attempt log, and keeps the body of a delivery still retrying', async () => {
    const add = async (receiver: WebhookReceiver) =>
      (await cli().json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url, '--participants')).id;
    const [done, retrying] = [await add(answering), await add(failing)];
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!, { name: 'Rosalind Franklin', email: 'rf@example.com' });
    await answering.waitFor((received) => received.some((d) => bookingOf(d).id === bookingId));
    await failing.waitFor((received) => received.some((d) => bookingOf(d).id === bookingId));
    const stored = async () =>
      (await db.query<{ endpoint_id: string; body: string | null }>('SELECT endpoint_id, body FROM webhook_deliveries ORDER BY endpoint_id')).rows;
    const deliveryTo = async (endpointId: string) => (await cli().json<Delivery[]>('webhook', 'deliveries', '--endpoint', endpointId))[0]!;

    await expect.poll(async () => (await deliveryTo(done)).state).toBe('succeeded');
    const finishedAt = Date.now();
    expect((await stored()).every((row) => row.body?.includes('Rosalind Franklin'))).toBe(true);
    expect((await deliveryTo(done)).bodyErasedAt).toBeNull();

    await expect.poll(async () => (await deliveryTo(done)).bodyErasedAt, { timeout: 10_000, interval: 200 }).not.toBeNull();
    expect(Date.parse((await deliveryTo(done)).bodyErasedAt!)).toBeGreaterThanOrEqual(finishedAt + RETENTION_MS - 1_000);
    const rows = await stored();
    expect(rows.find((row) => row.endpoint_id === done)?.body).toBeNull();
    // The delivery still retrying keeps the exact bytes its next attempts must send.
    expect(rows.find((row) => row.endpoint_id === retrying)?.body).toBe(failing.received[0]!.body);
    expect(await deliveryTo(retrying)).toMatchObject({ state: 'pending', bodyErasedAt: null });
    // The attempt log stays.
    expect((await deliveryTo(done)).log).toMatchObject([{ number: 1, httpStatus: 204 }]);
    const text = await db.query<{ row: string }>("SELECT row(d.*)::text AS row FROM webhook_deliveries d WHERE state <> 'pending'");
    expect(text.rows.some((row) => row.row.includes('Rosalind'))).toBe(false);
  });

  it('erases the participant a booking.updated event keeps (before and at commit) once its deliveries are final for the retention time', async () => {
    await cli().json('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', answering.url, '--participants', '--events', 'booking.updated');
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!, { name: 'Barbara McClintock', email: 'bm@example.com' });
    await db.query("UPDATE participants SET name = 'Barbara M.' WHERE booking_id = $1", [bookingId]);
    await answering.waitFor((received) => received.some((d) => d.body.includes('"booking.updated"') && bookingOf(d).id === bookingId));
    const kept = async () =>
      (
        await db.query<{ row: string; erased: Date | null }>(
          "SELECT row(ev.*)::text AS row, participant_erased_at AS erased FROM webhook_events ev WHERE booking_id = $1 AND type = 'booking.updated'",
          [bookingId],
        )
      ).rows[0]!;
    expect((await kept()).row).toContain('Barbara McClintock');
    await expect.poll(async () => (await kept()).erased, { timeout: 10_000, interval: 200 }).not.toBeNull();
    expect((await kept()).row).not.toContain('Barbara');
  });
});
