import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { components } from '../../src/contract/public-v1-types.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { expectWebhookMatchesSpec } from '../support/openapi.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { bookingOf, insertBooking, verifyDelivery, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

type BookingCreatedEvent = components['schemas']['BookingCreatedEvent'];

describeOnEachDatabase('signed booking.created webhooks on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let plain: WebhookReceiver;
  let personal: WebhookReceiver;
  let plainEndpoint: { id: string; secret: string };
  let personalEndpoint: { id: string; secret: string };
  const env = webhookEnv();

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Hooks', 3));
    [plain, personal] = await Promise.all([startReceiver(), startReceiver()]);
    const cli = cliOn(db, env);
    plainEndpoint = await cli.json('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', plain.url);
    personalEndpoint = await cli.json('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', personal.url, '--participants');
    api = await startTestApi(db, env, { trustedCertificates: [plain.certificate] });
  });
  afterAll(async () => {
    await api?.close();
    await plain?.close();
    await personal?.close();
    await db?.close();
  });

  it('webhooks.secret: the secret is whsec_ + base64 of 32 random bytes, shown once at registration', async () => {
    expect(plainEndpoint.id).toMatch(/^whe_[0-9a-f]{32}$/);
    for (const secret of [plainEndpoint.secret, personalEndpoint.secret]) {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    }
    expect(plainEndpoint.secret).not.toBe(personalEndpoint.secret);
    const listed = JSON.stringify(await cliOn(db, env).json('webhook', 'list', '--workspace', ws.workspaceId));
    expect(listed).not.toContain(plainEndpoint.secret.slice(6, 20));
    const stored = await db.query<{ row: string }>('SELECT row(e.*)::text AS row FROM webhook_endpoints e');
    for (const row of stored.rows) expect(row.row).not.toContain(plainEndpoint.secret.slice(6, 20));
  });

  it('webhooks.signature: a delivery verifies with the standardwebhooks package through x-svc-signature, and a tampered body or a wrong secret does not', async () => {
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!, { name: 'Grace Hopper', email: 'grace@example.com' });
    await plain.waitFor((received) => received.some((d) => bookingOf(d).id === bookingId));
    const delivery = plain.received.find((d) => bookingOf(d).id === bookingId)!;
    expect(verifyDelivery(plainEndpoint.secret, delivery)).toMatchObject({ type: 'booking.created', data: { booking: { id: bookingId } } });
    expect(delivery.headers['webhook-signature']).toBe(delivery.headers['x-svc-signature']);
    expect(delivery.headers['x-svc-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(() => verifyDelivery(plainEndpoint.secret, delivery, delivery.body.replace('confirmed', 'cancelled'))).toThrow(/signature/i);
    expect(() => verifyDelivery(personalEndpoint.secret, delivery)).toThrow(/signature/i);
    await expectWebhookMatchesSpec(delivery.headers, delivery.body);
  });

  it('webhooks.payload: the payload is { id, type, createdAt, data: { booking } } with the booking exactly as GET /bookings shows it, participant only for endpoints registered with it', async () => {
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r2!, { name: 'Ada Lovelace', email: 'ada@example.com' });
    await plain.waitFor((received) => received.some((d) => bookingOf(d).id === bookingId));
    await personal.waitFor((received) => received.some((d) => bookingOf(d).id === bookingId));
    const withoutPersonalData = plain.received.find((d) => bookingOf(d).id === bookingId)!;
    const withPersonalData = personal.received.find((d) => bookingOf(d).id === bookingId)!;
    for (const delivery of [withoutPersonalData, withPersonalData]) await expectWebhookMatchesSpec(delivery.headers, delivery.body);

    const rest = async (key: string) =>
      ((await api.call('/api/public/v1/bookings', { key })).body as components['schemas']['BookingList']).data.find((b) => b.id === bookingId);
    const event = JSON.parse(withoutPersonalData.body) as BookingCreatedEvent;
    expect(Object.keys(event).sort()).toEqual(['createdAt', 'data', 'id', 'type']);
    expect(event.type).toBe('booking.created');
    expect(event.id).toBe(withoutPersonalData.headers['webhook-id']);
    expect(event.createdAt).toBe(new Date(event.createdAt).toISOString());
    expect(event.data.booking).toEqual(await rest(ws.bookingsKey));
    expect(event.data.booking).not.toHaveProperty('participant');
    expect(bookingOf(withPersonalData)).toEqual(await rest(ws.fullKey));
    expect(bookingOf(withPersonalData)).toHaveProperty('participant.name', 'Ada Lovelace');
    // One event per booking: both endpoints got the same event id.
    expect(withPersonalData.headers['webhook-id']).toBe(event.id);
  });

  it('webhooks.guarantee: every booking insert produces exactly one event in its transaction; a rolled-back insert produces none', async () => {
    const before = plain.received.length;
    await db.transaction(async (client) => {
      await insertBooking(client, ws.workspaceId, ws.ids.r1!);
      await client.query('SELECT 1/0').catch(() => {});
      throw new Error('roll back');
    }).catch(() => {});
    const kept = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await plain.waitFor((received) => received.some((d) => bookingOf(d).id === kept));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = plain.received.slice(before);
    expect(after.map((d) => bookingOf(d).id)).toEqual([kept]);
    expect(new Set(plain.received.map((d) => d.headers['webhook-id'])).size).toBe(plain.received.length);
  });

  it('webhooks.headers: a delivery is an HTTPS POST of JSON with x-svc-signature, webhook-id (the event id), webhook-timestamp (Unix seconds) and webhook-signature (the same value), which a Standard Webhooks library verifies unchanged', async () => {
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await plain.waitFor((received) => received.some((d) => bookingOf(d).id === bookingId));
    const delivery = plain.received.find((d) => bookingOf(d).id === bookingId)!;
    expect(new URL(plain.url).protocol).toBe('https:');
    expect(delivery.method).toBe('POST');
    expect(delivery.headers['content-type']).toMatch(/^application\/json\b/);
    expect(delivery.headers['webhook-id']).toMatch(/^evt_/);
    expect(delivery.headers['webhook-id']).toBe((JSON.parse(delivery.body) as BookingCreatedEvent).id);
    expect(delivery.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(Math.abs(Date.now() / 1000 - Number(delivery.headers['webhook-timestamp']))).toBeLessThan(300);
    expect(delivery.headers['x-svc-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(delivery.headers['webhook-signature']).toBe(delivery.headers['x-svc-signature']);
    const asSent = {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers['webhook-signature']),
    };
    expect(new Webhook(plainEndpoint.secret).verify(delivery.body, asSent)).toMatchObject({ data: { booking: { id: bookingId } } });
  });

  it('webhooks.event: a new booking produces one booking.created event, and reading through the public endpoints produces none', async () => {
    const before = plain.received.length;
    for (const method of ['GET', 'HEAD']) {
      for (const path of ['/api/public/v1/courses', '/api/public/v1/bookings']) {
        expect((await api.call(path, { method, key: ws.fullKey })).status).toBe(200);
      }
    }
    const booked = await insertBooking(db, ws.workspaceId, ws.ids.r2!);
    await plain.waitFor((received) => received.some((d) => bookingOf(d).id === booked));
    // Time for an event of the reads above to arrive too, were there one.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = plain.received.slice(before).map((d) => JSON.parse(d.body) as BookingCreatedEvent);
    expect(after.map((event) => [event.type, event.data.booking.id])).toEqual([['booking.created', booked]]);
  });

  it('webhooks.event: an endpoint registered after an event was recorded does not receive it, and a removed endpoint receives no new events', async () => {
    const late = await startReceiver();
    try {
      const cli = cliOn(db, env);
      const earlier = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
      const endpoint = await cli.json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', late.url);
      const later = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
      await late.waitFor((received) => received.some((d) => bookingOf(d).id === later));
      await plain.waitFor((received) => received.some((d) => bookingOf(d).id === earlier));
      expect(late.received.map((d) => bookingOf(d).id)).toEqual([later]);

      expect(await cli.json('webhook', 'remove', '--id', endpoint.id)).toEqual({ id: endpoint.id, state: 'removed' });
      const afterRemoval = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
      await plain.waitFor((received) => received.some((d) => bookingOf(d).id === afterRemoval));
      expect(late.received.map((d) => bookingOf(d).id)).toEqual([later]);
      const listed = await cli.json<Array<{ id: string; state: string }>>('webhook', 'list', '--workspace', ws.workspaceId);
      expect(listed.find((e) => e.id === endpoint.id)?.state).toBe('removed');
    } finally {
      await late.close();
    }
  });

  it('counts webhook attempts by outcome on the internal /metrics', async () => {
    const response = await fetch(`${api.server.internalUrl}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } });
    const text = await response.text();
    const success = /^webhook_attempts_total\{outcome="success"\} (\d+)$/m.exec(text);
    expect(Number(success?.[1])).toBeGreaterThanOrEqual(plain.received.length);
  });
});
