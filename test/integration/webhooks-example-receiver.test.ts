import { request } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BookingCopy, createReceiver, type BookingEvent } from '../../examples/webhook-receiver/receiver.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { selfSignedCertificate } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

function post(url: string, ca: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', ca, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describeOnEachDatabase('the example webhook receiver against real deliveries on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let receiver: Server;
  let url: string;
  let endpoint: { id: string; secret: string };
  let certificate: { cert: string; key: string };
  const handled: BookingEvent[] = [];
  const copy = new BookingCopy();
  const env = webhookEnv();

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Example', 1));
    certificate = await selfSignedCertificate();
    url = `https://127.0.0.1:${await freePort()}/webhooks`;
    endpoint = await cliOn(db, env).json('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', url, '--participants', '--events', 'booking.created,booking.updated');
    receiver = createReceiver({
      secret: endpoint.secret,
      tls: certificate,
      onEvent: (event) => {
        handled.push(event);
        copy.apply(event);
      },
    });
    await new Promise<void>((resolve) => receiver.listen(Number(new URL(url).port), '127.0.0.1', resolve));
    api = await startTestApi(db, env, { trustedCertificates: [certificate.cert] });
  });
  afterAll(async () => {
    await api?.close();
    await new Promise((resolve) => receiver?.close(resolve));
    await db?.close();
  });

  it('verifies a real delivery, acknowledges it, and handles a redelivered event only once (dedup by webhook-id)', async () => {
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!, { name: 'Katherine Johnson', email: 'kj@example.com' });
    await expect.poll(() => handled.length, { timeout: 20_000 }).toBe(1);
    const event = handled[0]!;
    expect(event).toMatchObject({ type: 'booking.created', data: { booking: { id: bookingId, participant: { name: 'Katherine Johnson' } } } });
    // The attempt is recorded once the receiver's answer is in: the receiver may see the event first.
    const deliveries = () => cliOn(db, env).json<Array<{ state: string; log: Array<{ httpStatus: number }> }>>('webhook', 'deliveries', '--endpoint', endpoint.id);
    await expect.poll(async () => (await deliveries())[0], { timeout: 10_000 }).toMatchObject({ state: 'succeeded', log: [{ httpStatus: 204 }] });

    const again = await cliOn(db, env, { certificate: certificate.cert }).json('webhook', 'redeliver', '--event', event.id, '--endpoint', endpoint.id);
    expect(again).toMatchObject({ ok: true, httpStatus: 204 });
    expect(handled).toHaveLength(1);
  });

  it('refuses a delivery with a forged signature', async () => {
    const body = JSON.stringify({ id: 'evt_forged', type: 'booking.created', createdAt: new Date().toISOString(), data: { booking: {} } });
    const status = await post(url, certificate.cert, {
      'content-type': 'application/json',
      'webhook-id': 'evt_forged',
      'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'x-svc-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    }, body);
    expect(status).toBe(400);
    expect(handled.map((e) => e.id)).not.toContain('evt_forged');
  });

  it("the README's walk-through: importing examples/webhook-receiver/new-booking.json into the workspace delivers its booking", async () => {
    const fixture = new URL('../../examples/webhook-receiver/new-booking.json', import.meta.url).pathname;
    const imported = await cliOn(db, env).json<{ ids: Record<string, string> }>('import', '--workspace', ws.workspaceId, '--file', fixture);
    const bookingId = imported.ids.b1;
    expect(bookingId).toMatch(/^bkg_/);
    await expect.poll(() => handled.some((event) => event.data.booking.id === bookingId), { timeout: 20_000 }).toBe(true);
  });

  it('keeps a copy of the bookings from booking.created and booking.updated: a retried older event does not undo a newer one, and a test event is left out', async () => {
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!, { name: 'Mary Jackson', email: 'mj@example.com' });
    await expect.poll(() => copy.bookings.get(bookingId)?.status, { timeout: 20_000 }).toBe('confirmed');
    const created = handled.find((event) => event.type === 'booking.created' && event.data.booking.id === bookingId)!;
    await db.query("UPDATE bookings SET status = 'cancelled', updated_at = now() WHERE id = $1", [bookingId]);
    await expect.poll(() => copy.bookings.get(bookingId)?.status, { timeout: 20_000 }).toBe('cancelled');
    const updated = handled.find((event) => event.type === 'booking.updated' && event.data.booking.id === bookingId)!;
    expect(updated.type === 'booking.updated' && updated.data.previous).toMatchObject({ status: 'confirmed' });
    // The booking.created event arriving again late (a redelivery after a lost answer) changes nothing.
    expect(copy.apply(created)).toBe('older');
    expect(copy.bookings.get(bookingId)).toEqual(updated.data.booking);

    const before = new Map(copy.bookings);
    const sent = await cliOn(db, env, { certificate: certificate.cert }).json<{ event: string; ok: boolean }>('webhook', 'test', '--endpoint', endpoint.id, '--type', 'booking.updated');
    expect(sent.ok).toBe(true);
    expect(handled.find((event) => event.id === sent.event)).toMatchObject({ test: true, type: 'booking.updated' });
    expect(copy.bookings).toEqual(before);
  });
});
