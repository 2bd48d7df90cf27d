import { beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { importDemo } from '../../src/demo/demo.ts';
import { createApiKey } from '../../src/auth/api-key-store.ts';
import type { components } from '../../src/contract/public-v1-types.ts';
import { captureStatements } from '../support/statements.ts';
import { type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

type BookingList = components['schemas']['BookingList'];

describeOnEachDatabase('GET /api/public/v1/bookings on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let other: SeededWorkspace;

  const list = async (key: string) => {
    const response = await api.call('/api/public/v1/bookings', { key });
    expect(response.status).toBe(200);
    return (response.body as BookingList).data;
  };

  beforeAll(async () => {
    ({ db, api } = await sharedTestApi(target));
    ws = await seedWorkspace(db, contractFixture('Bookings'));
    other = await seedWorkspace(db, contractFixture('Bookings'));
  });

  it('resources.booking-limit: bookings come newest first with a fixed limit of 100 entries', async () => {
    const bookings = await list(ws.bookingsKey);
    expect(bookings).toHaveLength(100);
    const times = bookings.map((booking) => booking.createdAt);
    expect(times).toEqual([...times].sort().reverse());
    // 105 bookings exist: the 5 oldest (b0…b4) are not in the answer.
    expect(bookings.map((booking) => booking.id)).not.toContain(ws.ids.b0);
    expect(bookings[0]!.id).toBe(ws.ids.b104);
  });

  it('resources.booking-order: bookings with the same createdAt are ordered by id descending', async () => {
    const small = await seedWorkspace(db, contractFixture('Ties', 6));
    const bookings = await list(small.bookingsKey);
    const tied = [small.ids.b3!, small.ids.b4!].sort().reverse();
    const positions = bookings.map((booking) => booking.id).filter((id) => tied.includes(id));
    expect(positions).toEqual(tied);
  });

  it('resources.booking-fields: a booking has id, courseRunId, source, status, createdAt, updatedAt with the contract enums', async () => {
    for (const booking of await list(ws.bookingsKey)) {
      expect(Object.keys(booking).sort()).toEqual(['courseRunId', 'createdAt', 'id', 'source', 'status', 'updatedAt']);
      expect(['admin', 'public_page', 'widget', 'api']).toContain(booking.source);
      expect(['pending', 'confirmed', 'waitlisted', 'cancelled', 'expired']).toContain(booking.status);
      expect([ws.ids.r1, ws.ids.r2, ws.ids.r4]).toContain(booking.courseRunId);
      expect(booking.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(booking.updatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
  });

  it('resources.timestamps: timestamps stored with microseconds are written with milliseconds, truncated exactly as Date.toISOString writes them', async () => {
    const small = await seedWorkspace(db, contractFixture('Micro', 2));
    await db.query(
      "UPDATE bookings SET created_at = '2026-03-04 05:06:07.891999+00', updated_at = '2026-03-04 07:06:08.000001+02' WHERE id = $1",
      [small.ids.b1],
    );
    // PostgreSQL drops trailing zeros of the fraction, and the whole fraction on whole seconds.
    await db.query("UPDATE bookings SET created_at = '2026-03-04 05:06:07+00', updated_at = '2026-03-04 05:06:07.05+00' WHERE id = $1", [small.ids.b0]);
    const bookings = await list(small.bookingsKey);
    for (const [id, createdAt, updatedAt] of [
      [small.ids.b1, '2026-03-04T05:06:07.891Z', '2026-03-04T05:06:08.000Z'],
      [small.ids.b0, '2026-03-04T05:06:07.000Z', '2026-03-04T05:06:07.050Z'],
    ] as const) {
      const stored = (await db.query<{ created_at: Date; updated_at: Date }>('SELECT created_at, updated_at FROM bookings WHERE id = $1', [id])).rows[0]!;
      const booking = bookings.find((entry) => entry.id === id)!;
      expect([booking.createdAt, booking.updatedAt]).toEqual([createdAt, updatedAt]);
      expect([booking.createdAt, booking.updatedAt]).toEqual([stored.created_at.toISOString(), stored.updated_at.toISOString()]);
    }
  });

  it('resources.participant-scope: without participants:read the field participant is absent, never null', async () => {
    const response = await api.call('/api/public/v1/bookings', { key: ws.bookingsKey });
    expect(response.text).not.toContain('participant');
    expect(response.text).not.toContain('@bookings.example');
  });

  it('resources.participant-presence: participant appears with participants:read only where the booking has participant data', async () => {
    const bookings = await list(ws.fullKey);
    for (const booking of bookings) {
      const index = Number(Object.entries(ws.ids).find(([, id]) => id === booking.id)![0].slice(1));
      if (index % 7 === 0) {
        expect(booking).not.toHaveProperty('participant');
      } else {
        expect(booking.participant).toEqual({ name: `Person ${index} of Bookings`, email: `p${index}@bookings.example` });
      }
    }
  });

  it('resources.participant-scope: participant data is not even read from the database without participants:read', async () => {
    // A change to every booking first, so that both answers are built again, none of their
    // bookings reused from the response cache.
    await db.query('UPDATE bookings SET status = status WHERE workspace_id = $1', [ws.workspaceId]);
    const withoutScope = await captureStatements(db, () => list(ws.bookingsKey));
    expect(withoutScope.some((text) => text.includes('participants'))).toBe(false);
    const withScope = await captureStatements(db, () => list(ws.fullKey));
    expect(withScope.some((text) => text.includes('participants'))).toBe(true);
  });

  it('scopes.bookings: a key with only courses:read calling /bookings gets 403 missing_scope', async () => {
    const response = await api.call('/api/public/v1/bookings', { key: ws.coursesOnlyKey });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ error: { code: 'missing_scope', message: expect.any(String) } });
    expect(response.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="bookings:read"');
  });

  it('resources.workspace-from-key: the workspace comes only from the key, and neither key sees an id of the other workspace', async () => {
    const mine = JSON.stringify([await list(ws.fullKey), (await api.call('/api/public/v1/courses', { key: ws.fullKey })).body]);
    const theirs = JSON.stringify([await list(other.fullKey), (await api.call('/api/public/v1/courses', { key: other.fullKey })).body]);
    for (const id of Object.values(other.ids)) expect(mine).not.toContain(id);
    for (const id of Object.values(ws.ids)) expect(theirs).not.toContain(id);
    expect(mine).not.toContain(other.workspaceId);
  });

  it('resources.workspace-from-key: a query parameter cannot select a workspace: naming the other workspace is refused with 400 and shows nothing of it', async () => {
    for (const path of ['/api/public/v1/bookings', '/api/public/v1/courses']) {
      for (const name of ['workspace', 'workspaceId', 'workspace_id']) {
        const response = await api.call(`${path}?${name}=${other.workspaceId}`, { key: ws.fullKey });
        expect(response.status, `${path}?${name}`).toBe(400);
        expect(response.body).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining(`"${name}"`) } });
        expect(response.text).not.toContain(other.workspaceId);
      }
    }
    // The same key without the parameter still sees its own workspace only.
    const own = await list(ws.fullKey);
    expect(own.map((booking) => booking.id)).toContain(ws.ids.b104);
    for (const id of Object.values(other.ids)) expect(JSON.stringify(own)).not.toContain(id);
  });

  it('personal data over the whole demo: participant never without the scope, always with it where the booking has one', async () => {
    const { workspaceId } = await importDemo(db);
    const owner = await db.query<{ email: string }>("SELECT email FROM members WHERE workspace_id = $1 AND role = 'owner' LIMIT 1", [workspaceId]);
    const email = owner.rows[0]!.email;
    const full = await createApiKey(db, { workspaceId, memberEmail: email, scopes: ['bookings:read', 'participants:read'] });
    const limited = await createApiKey(db, { workspaceId, memberEmail: email, scopes: ['bookings:read'] });
    const expected = await db.query<{ id: string; name: string | null; email: string | null }>(
      `SELECT b.id, p.name, p.email FROM bookings b LEFT JOIN participants p ON p.booking_id = b.id
        WHERE b.workspace_id = $1 ORDER BY b.created_at DESC, b.id DESC LIMIT 100`,
      [workspaceId],
    );
    const withScope = await list(full.key);
    expect(withScope.map((booking) => booking.id)).toEqual(expected.rows.map((row) => row.id));
    expect(expected.rows.some((row) => row.name === null)).toBe(true);
    withScope.forEach((booking, i) => {
      const row = expected.rows[i]!;
      if (row.name === null) expect(booking).not.toHaveProperty('participant');
      else expect(booking.participant).toEqual({ name: row.name, email: row.email });
    });
    const withoutScope = await api.call('/api/public/v1/bookings', { key: limited.key });
    expect(withoutScope.text).not.toContain('participant');
    for (const row of expected.rows) if (row.email) expect(withoutScope.text).not.toContain(row.email);
  });
});
