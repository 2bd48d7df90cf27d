import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { components } from '../../src/contract/public-v1-types.ts';
import type { Database } from '../../src/db/database.ts';
import { newId } from '../../src/db/ids.ts';
import { migrate } from '../../src/db/migrate.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { idLiteral, withServerFile } from '../support/server-files.ts';
import { writeInTransaction, type Role, type Statement } from '../support/sql-writes.ts';
import { startReceiver, type ReceivedDelivery, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

type Event = components['schemas']['BookingCreatedEvent'] | components['schemas']['BookingUpdatedEvent'];
type UpdatedEvent = components['schemas']['BookingUpdatedEvent'];
type Booking = components['schemas']['Booking'];

const eventOf = (delivery: ReceivedDelivery) => JSON.parse(delivery.body) as Event;
const updatesOf = (receiver: WebhookReceiver, bookingId: string) =>
  receiver.received.map(eventOf).filter((event): event is UpdatedEvent => event.type === 'booking.updated' && event.data.booking.id === bookingId);

describeOnEachDatabase('booking.updated webhooks on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  /** Subscribed to both types, without participant data. */
  let plain: WebhookReceiver;
  /** Subscribed to both types, with participant data. */
  let personal: WebhookReceiver;
  /** Registered without --events, with participant data: booking.created alone. */
  let legacy: WebhookReceiver;
  const endpoints: Record<string, string> = {};
  let sql: pg.Client;
  const env = webhookEnv();
  const cli = () => cliOn(db, env);
  const write = (statements: Statement[], role: Role = 'origin') => writeInTransaction(sql, statements, role);
  const id = (ref: string) => ws.ids[ref]!;
  /** The booking as GET /bookings shows it now to a key with (or without) participants:read. */
  const rest = async (bookingId: string, withParticipant: boolean) =>
    ((await api.call('/api/public/v1/bookings', { key: withParticipant ? ws.fullKey : ws.bookingsKey })).body as { data: Booking[] }).data.find((b) => b.id === bookingId);
  /** What the outbox holds for a booking: booking.updated events, and deliveries of them by endpoint. */
  const outbox = async (bookingId: string) =>
    (
      await sql.query<{ event: string; endpoint: string | null }>(
        `SELECT ev.id AS event, d.endpoint_id AS endpoint FROM webhook_events ev LEFT JOIN webhook_deliveries d ON d.event_id = ev.id
          WHERE ev.booking_id = $1 AND ev.type = 'booking.updated' ORDER BY ev.created_at, d.endpoint_id`,
        [bookingId],
      )
    ).rows;
  /** Waits for `count` booking.updated events of the booking at each receiver, then a moment for any more. */
  async function updates(bookingId: string, receivers: WebhookReceiver[], count = 1): Promise<void> {
    for (const receiver of receivers) await receiver.waitFor(() => updatesOf(receiver, bookingId).length >= count, 15_000);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Updates', 15));
    sql = new pg.Client({ connectionString: db.connectionString });
    await sql.connect();
    // The platform's tables hold more than the public representation shows, and reference other
    // tables of its own: a column no answer reads, and contacts whose erasure removes participants.
    await sql.query('ALTER TABLE bookings ADD COLUMN internal_note text');
    await sql.query('CREATE TABLE contacts (id text PRIMARY KEY)');
    await sql.query('ALTER TABLE participants ADD COLUMN contact_id text REFERENCES contacts (id) ON DELETE CASCADE');
    [plain, personal, legacy] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
    const add = async (receiver: WebhookReceiver, ...options: string[]) => {
      const added = await cli().json<{ id: string; secret: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url, ...options);
      receiver.checkWith([added.secret]);
      return added.id;
    };
    endpoints.plain = await add(plain, '--events', 'booking.created,booking.updated');
    endpoints.personal = await add(personal, '--participants', '--events', 'booking.updated, booking.created');
    endpoints.legacy = await add(legacy, '--participants');
    api = await startTestApi(db, env, { trustedCertificates: [plain.certificate] });
  });
  afterAll(async () => {
    await sql?.end();
    await api?.close();
    for (const receiver of [plain, personal, legacy]) await receiver?.close();
    await db?.close();
  });

  it('webhooks.subscriptions: --events chooses the types, none means booking.created alone; webhook list and webhook events show them, --set changes them, an unknown type is refused', async () => {
    const listed = await cli().json<Array<{ id: string; events: string[] }>>('webhook', 'list', '--workspace', ws.workspaceId);
    expect(Object.fromEntries(listed.map((e) => [e.id, e.events]))).toEqual({
      [endpoints.plain!]: ['booking.created', 'booking.updated'],
      [endpoints.personal!]: ['booking.created', 'booking.updated'],
      [endpoints.legacy!]: ['booking.created'],
    });
    expect((await cli().run('webhook', 'list', '--workspace', ws.workspaceId)).stdout).toContain(`${endpoints.legacy}  active    participants  booking.created  ${legacy.url}`);

    const refused = await cli().run('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', plain.url, '--events', 'booking.created,booking.cancelled');
    expect([refused.code, refused.stdout]).toEqual([1, '']);
    expect(refused.stderr).toBe('error: --events names unknown event type(s) "booking.cancelled"; the types are booking.created, booking.updated\n');

    const spare = await cli().json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', 'https://127.0.0.1:9/unused');
    expect(await cli().json('webhook', 'events', '--endpoint', spare.id)).toEqual({ id: spare.id, events: ['booking.created'] });
    expect(await cli().json('webhook', 'events', '--endpoint', spare.id, '--set', 'booking.updated')).toEqual({ id: spare.id, events: ['booking.updated'] });
    expect((await cli().run('webhook', 'events', '--endpoint', spare.id)).stdout).toBe(`Webhook endpoint ${spare.id} receives booking.updated\n`);
    for (const set of ['booking.updated,nope', '']) {
      const bad = await cli().run('webhook', 'events', '--endpoint', spare.id, '--set', set);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^error: --set .*; the types are booking\.created, booking\.updated\n$/);
    }
    expect(await cli().json('webhook', 'events', '--endpoint', spare.id)).toEqual({ id: spare.id, events: ['booking.updated'] });
    await cli().json('webhook', 'remove', '--id', spare.id);
  });

  it('webhooks.updated: a committed UPDATE of a booking sends one booking.updated to each subscribed endpoint: data.booking as GET /bookings shows it, previous the changed fields before', async () => {
    const bookingId = id('b1');
    const before = (await rest(bookingId, true))!;
    await write([["UPDATE bookings SET status = 'cancelled', updated_at = updated_at + interval '1 minute' WHERE id = $1", [bookingId]]]);
    await updates(bookingId, [plain, personal]);
    const [toPlain, toPersonal] = [updatesOf(plain, bookingId), updatesOf(personal, bookingId)];
    expect([toPlain.length, toPersonal.length]).toEqual([1, 1]);
    expect(toPlain[0]!.id).toBe(toPersonal[0]!.id);
    expect(toPlain[0]!.data).toEqual({ booking: await rest(bookingId, false), previous: { status: before.status, updatedAt: before.updatedAt } });
    expect(toPersonal[0]!.data).toEqual({ booking: await rest(bookingId, true), previous: { status: 'confirmed', updatedAt: before.updatedAt } });
    expect(toPersonal[0]!.data.booking.participant).toEqual(before.participant);
  });

  it('webhooks.updated: several changes in one transaction make one event with the state at commit; previous holds each changed field as it was before the transaction', async () => {
    const bookingId = id('b2');
    const before = (await rest(bookingId, true))!;
    await write([
      ["UPDATE bookings SET status = 'confirmed' WHERE id = $1", [bookingId]],
      ["UPDATE participants SET name = 'Renamed Person' WHERE booking_id = $1", [bookingId]],
      ['UPDATE bookings SET course_run_id = $2 WHERE id = $1', [bookingId, id('r1')]],
      ["UPDATE bookings SET status = 'expired', updated_at = updated_at + interval '1 hour' WHERE id = $1", [bookingId]],
    ]);
    await updates(bookingId, [plain, personal]);
    expect((await outbox(bookingId)).map((row) => row.endpoint)).toEqual([endpoints.plain, endpoints.personal].sort());
    const [toPlain] = updatesOf(plain, bookingId);
    const [toPersonal] = updatesOf(personal, bookingId);
    const after = (await rest(bookingId, true))!;
    expect(after).toMatchObject({ status: 'expired', courseRunId: id('r1'), participant: { name: 'Renamed Person' } });
    expect(toPersonal!.data).toEqual({
      booking: after,
      previous: { courseRunId: before.courseRunId, status: 'waitlisted', updatedAt: before.updatedAt, participant: before.participant },
    });
    expect(toPlain!.data).toEqual({ booking: await rest(bookingId, false), previous: { courseRunId: before.courseRunId, status: 'waitlisted', updatedAt: before.updatedAt } });
  });

  it('webhooks.updated: a statement that changes nothing visible gives no event: the same values again, a change undone in its transaction, a column no answer shows, a time changed below the millisecond', async () => {
    const bookingId = id('b3');
    await write([['UPDATE bookings SET status = status, course_run_id = course_run_id WHERE id = $1', [bookingId]]]);
    await write([
      ["UPDATE bookings SET status = 'confirmed' WHERE id = $1", [bookingId]],
      ["UPDATE participants SET email = 'changed@example.com' WHERE booking_id = $1", [bookingId]],
      ["UPDATE bookings SET status = 'cancelled' WHERE id = $1", [bookingId]],
      ['UPDATE participants SET email = $2 WHERE booking_id = $1', [bookingId, (await rest(bookingId, true))!.participant!.email]],
    ]);
    await write([["UPDATE bookings SET internal_note = 'called back' WHERE id = $1", [bookingId]]]);
    await write([["UPDATE bookings SET updated_at = updated_at + interval '1 microsecond' WHERE id = $1", [bookingId]]]);
    await write([["UPDATE participants SET name = name WHERE booking_id = $1", [bookingId]]]);
    // A change of another booking afterwards arrives; nothing of these does.
    await write([["UPDATE bookings SET status = 'pending' WHERE id = $1", [id('b4')]]]);
    await updates(id('b4'), [plain, personal]);
    expect(await outbox(bookingId)).toEqual([]);
    expect([...updatesOf(plain, bookingId), ...updatesOf(personal, bookingId)]).toEqual([]);
  });

  it('resources.participant-scope: a change of the participant alone reaches only endpoints with participant data; an endpoint without it sees no participant in data.booking or previous', async () => {
    const alone = id('b5');
    const was = (await rest(alone, true))!.participant;
    await write([["UPDATE participants SET email = 'new-address@example.com' WHERE booking_id = $1", [alone]]]);
    await updates(alone, [personal]);
    expect((await outbox(alone)).map((row) => row.endpoint)).toEqual([endpoints.personal]);
    expect(updatesOf(personal, alone).map((event) => event.data.previous)).toEqual([{ participant: was }]);
    expect(updatesOf(plain, alone)).toEqual([]);

    const both = id('b6');
    const { participant: person, status } = (await rest(both, true))!;
    await write([
      ["UPDATE bookings SET status = 'cancelled' WHERE id = $1", [both]],
      ["UPDATE participants SET name = 'Another Name', email = 'another@example.com' WHERE booking_id = $1", [both]],
    ]);
    await updates(both, [plain, personal]);
    const [toPlain] = plain.received.filter((delivery) => eventOf(delivery).type === 'booking.updated' && eventOf(delivery).data.booking.id === both);
    expect((JSON.parse(toPlain!.body) as UpdatedEvent).data.previous).toEqual({ status });
    for (const text of [person!.name, person!.email, 'Another Name', 'another@example.com', 'participant']) expect(toPlain!.body).not.toContain(text);
    expect(updatesOf(personal, both)[0]!.data).toEqual({ booking: await rest(both, true), previous: { status, participant: person } });
  });

  it('webhooks.updated: a participant added to a booking that had none has previous.participant null; one removed is absent from data.booking', async () => {
    const added = id('b0');
    await write([["INSERT INTO participants (booking_id, name, email) VALUES ($1, 'Late Person', 'late@example.com')", [added]]]);
    const removed = id('b8');
    const was = (await rest(removed, true))!.participant;
    await write([['DELETE FROM participants WHERE booking_id = $1', [removed]]]);
    await updates(added, [personal]);
    await updates(removed, [personal]);
    expect(updatesOf(personal, added).map((event) => event.data)).toEqual([{ booking: await rest(added, true), previous: { participant: null } }]);
    expect(updatesOf(personal, removed).map((event) => event.data)).toEqual([{ booking: await rest(removed, true), previous: { participant: was } }]);
    expect(updatesOf(personal, removed)[0]!.data.booking).not.toHaveProperty('participant');
  });

  it('webhooks.guarantee: in replica role, as logical replication applies rows, a booking changed with its participant gives one event', async () => {
    const bookingId = id('b9');
    const before = (await rest(bookingId, true))!;
    await write(
      [
        ["UPDATE bookings SET status = 'waitlisted' WHERE id = $1", [bookingId]],
        ["UPDATE participants SET name = 'Replicated Name' WHERE booking_id = $1", [bookingId]],
      ],
      'replica',
    );
    await updates(bookingId, [plain, personal]);
    expect(updatesOf(plain, bookingId).map((event) => event.data.previous)).toEqual([{ status: before.status }]);
    expect(updatesOf(personal, bookingId).map((event) => event.data)).toEqual([
      { booking: await rest(bookingId, true), previous: { status: before.status, participant: before.participant } },
    ]);
  });

  it.each(['origin', 'replica'] as const)('webhooks.guarantee: participants loaded with COPY (%s role) give booking.updated', async (role) => {
    const bookingId = id(role === 'origin' ? 'b7' : 'b14');
    await withServerFile(sql, target, `SELECT ${idLiteral(bookingId)}, 'Copied Person', 'copied-${role}@example.com'`, (file) =>
      write([[`COPY participants (booking_id, name, email) FROM '${file}' WITH (FORMAT csv)`]], role),
    );
    await updates(bookingId, [personal]);
    expect(updatesOf(personal, bookingId).map((event) => [event.data.booking.participant, event.data.previous])).toEqual([
      [{ name: 'Copied Person', email: `copied-${role}@example.com` }, { participant: null }],
    ]);
  });

  it('webhooks.guarantee: a participant removed by a cascade (its contact erased in another table of the platform) gives booking.updated', async () => {
    const bookingId = id('b10');
    const was = (await rest(bookingId, true))!.participant;
    await write([
      ["INSERT INTO contacts (id) VALUES ('contact-b10')"],
      ["UPDATE participants SET contact_id = 'contact-b10' WHERE booking_id = $1", [bookingId]],
    ]);
    expect(await outbox(bookingId)).toEqual([]);
    await write([["DELETE FROM contacts WHERE id = 'contact-b10'"]]);
    await updates(bookingId, [personal]);
    expect((await sql.query('SELECT 1 FROM participants WHERE booking_id = $1', [bookingId])).rowCount).toBe(0);
    expect(updatesOf(personal, bookingId).map((event) => event.data)).toEqual([{ booking: await rest(bookingId, true), previous: { participant: was } }]);
  });

  it('webhooks.guarantee: a restore\'s ALTER TABLE … ENABLE TRIGGER ALL makes the triggers ordinary; migrate gives them their roles back, and a replica-role change gives its event again', async () => {
    const roles = async () =>
      (
        await sql.query<{ name: string; enabled: string }>(
          `SELECT tgname AS name, tgenabled AS enabled FROM pg_trigger
            WHERE tgrelid IN ('participants'::regclass, 'webhook_events'::regclass) AND NOT tgisinternal ORDER BY tgname`,
        )
      ).rows;
    const before = await roles();
    expect(before.filter((row) => row.enabled !== 'O')).toEqual([
      { name: 'participants_data_version_in_replica', enabled: 'R' },
      { name: 'participants_data_version_truncate', enabled: 'A' },
      { name: 'participants_record_changed_in_replica', enabled: 'R' },
      { name: 'webhook_events_close_at_commit', enabled: 'A' },
    ]);
    await write([['ALTER TABLE participants ENABLE TRIGGER ALL'], ['ALTER TABLE webhook_events ENABLE TRIGGER ALL']]);
    expect((await roles()).every((row) => row.enabled === 'O')).toBe(true);
    await migrate(db);
    expect(await roles()).toEqual(before);
    const bookingId = id('b11');
    await write([["UPDATE participants SET email = 'after-restore@example.com' WHERE booking_id = $1", [bookingId]]], 'replica');
    await updates(bookingId, [personal]);
    expect(updatesOf(personal, bookingId).map((event) => event.data.booking.participant?.email)).toEqual(['after-restore@example.com']);
  });

  it('webhooks.updated: a booking created and changed in one transaction gets booking.created alone, with the state at commit', async () => {
    const bookingId = newId('bkg');
    await write([
      ["INSERT INTO bookings (id, workspace_id, course_run_id, source, status) VALUES ($1, $2, $3, 'widget', 'pending')", [bookingId, ws.workspaceId, id('r2')]],
      ["INSERT INTO participants (booking_id, name, email) VALUES ($1, 'New Person', 'new@example.com')", [bookingId]],
      ["UPDATE bookings SET status = 'confirmed' WHERE id = $1", [bookingId]],
    ]);
    for (const receiver of [plain, personal, legacy]) await receiver.waitFor((received) => received.some((d) => eventOf(d).data.booking.id === bookingId));
    await new Promise((resolve) => setTimeout(resolve, 250));
    for (const receiver of [plain, personal, legacy]) {
      const events = receiver.received.map(eventOf).filter((event) => event.data.booking.id === bookingId);
      expect(events.map((event) => [event.type, event.data.booking.status])).toEqual([['booking.created', 'confirmed']]);
    }
    expect(await outbox(bookingId)).toEqual([]);
  });

  it('webhooks.subscriptions: the endpoint registered without --events received booking.created alone, and every delivery verified and matched the OpenAPI document', async () => {
    const types = (receiver: WebhookReceiver) => [...new Set(receiver.received.map((delivery) => eventOf(delivery).type))].sort();
    expect(types(legacy)).toEqual(['booking.created']);
    expect(types(plain)).toEqual(['booking.created', 'booking.updated']);
    const toLegacy = await sql.query(
      "SELECT 1 FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id WHERE d.endpoint_id = $1 AND ev.type = 'booking.updated'",
      [endpoints.legacy],
    );
    expect(toLegacy.rowCount).toBe(0);
    for (const receiver of [plain, personal, legacy]) expect(receiver.problems).toEqual([]);
  });
});
