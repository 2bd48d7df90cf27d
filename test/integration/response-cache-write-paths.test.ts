import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeedToken } from '../../src/calendar/feed-token-store.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { served, type Served, type ServedOptions } from '../support/cached-answers.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { idLiteral, withServerFile } from '../support/server-files.ts';
import { writeInTransaction, type Role, type Statement } from '../support/sql-writes.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const BOOKINGS = '/api/public/v1/bookings';

interface Booking {
  id: string;
  status: string;
  participant?: { name: string; email: string };
}
const bookingsIn = (text: string) => (JSON.parse(text) as { data: Booking[] }).data;
const bookingOf = (text: string, id: string) => bookingsIn(text).find((booking) => booking.id === id);

describeOnEachDatabase('the response cache, whatever path writes, on %s', (target) => {
  let db: Database;
  /** The production default: the cache on. */
  let api: TestApi;
  /** RESPONSE_CACHE_MAX_BYTES=0: every answer built from the data as it is. */
  let off: TestApi;
  /** A client of its own: every write here is plain SQL, not the service's code. */
  let sql: pg.Client;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    [api, off] = [await startTestApi(db), await startTestApi(db, { RESPONSE_CACHE_MAX_BYTES: '0' })];
    sql = new pg.Client({ connectionString: db.connectionString });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    for (const server of [api, off]) await server?.close();
    await db?.close();
  });

  /** Statements in one committed transaction on the test's own client, in the role given. */
  const write = (statements: Statement[], role: Role = 'origin') => writeInTransaction(sql, statements, role);

  /** Cached: built once, then served from the cache. */
  async function cached(path: string, options: ServedOptions = {}): Promise<Served> {
    await served(api, path, options);
    const hit = await served(api, path, options);
    expect([hit.status, hit.cache]).toEqual([200, 'hit']);
    return hit;
  }

  /** The next answer: not the cached bytes, but those the cache-off server builds from the data now. */
  async function fresh(path: string, options: ServedOptions = {}, outcome = 'miss'): Promise<Served> {
    const next = await served(api, path, options);
    expect([next.status, next.cache]).toEqual([200, outcome]);
    expect(next.text).toBe((await served(off, path, options)).text);
    return next;
  }

  const count = async (workspaceId: string) =>
    Number((await sql.query<{ n: string }>('SELECT coalesce(sum(version), 0) AS n FROM data_versions WHERE workspace_id = $1', [workspaceId])).rows[0]!.n);
  const slotsOf = async (workspaceId: string) =>
    (await sql.query<{ slot: number; version: string }>('SELECT slot, version FROM data_versions WHERE workspace_id = $1', [workspaceId])).rows;
  /** `data_versions` of a workspace written back as a restore loads it: the given rows, written anew. */
  const restoreSlots = (workspaceId: string, slots: Array<{ slot: number; version: string }>): Statement[] => [
    ['DELETE FROM data_versions WHERE workspace_id = $1', [workspaceId]],
    ...slots.map((row): Statement => ['INSERT INTO data_versions (workspace_id, slot, version) VALUES ($1, $2, $3)', [workspaceId, row.slot, row.version]]),
  ];
  /** What pg_restore --disable-triggers runs around loading a table. */
  const withTriggersDisabled = (table: string, statements: Statement[]): Statement[] => [
    [`ALTER TABLE ${table} DISABLE TRIGGER ALL`],
    ...statements,
    [`ALTER TABLE ${table} ENABLE TRIGGER ALL`],
  ];

  it('a participant\'s e-mail erased in replica role (the reproduction of issue 22) is in the next /bookings answer, not the cached one', async () => {
    const ws = await seedWorkspace(db, contractFixture('Erasure', 8));
    const before = await cached(BOOKINGS, { key: ws.fullKey });
    expect(bookingOf(before.text, ws.ids.b1!)?.participant?.email).toBe('p1@erasure.example');
    await write([["UPDATE participants SET email = 'erased@example.com' WHERE booking_id = $1", [ws.ids.b1]]], 'replica');
    const next = await fresh(BOOKINGS, { key: ws.fullKey });
    expect(bookingOf(next.text, ws.ids.b1!)?.participant?.email).toBe('erased@example.com');
    expect(next.text).not.toContain('p1@erasure.example');
  });

  describe('in replica role, as logical replication applies rows', () => {
    let ws: SeededWorkspace;
    let feed: string;

    beforeAll(async () => {
      ws = await seedWorkspace(db, contractFixture('Replica', 8));
      feed = (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL })).path;
    });

    // [what is written, the answer that shows it, its key, the write, whether an answer shows it]
    const cases: Array<[string, () => string, () => string | undefined, () => Statement, (text: string) => boolean]> = [
      ['a workspace updated', () => feed, () => undefined, () => ['UPDATE workspaces SET name = $2 WHERE id = $1', [ws.workspaceId, 'Replicated team']], (text) => /X-WR-CALNAME(;VALUE=TEXT)?:Replicated team\r\n/.test(text)],
      ['a course template updated', () => COURSES, () => ws.fullKey, () => ['UPDATE course_templates SET title = $2 WHERE id = $1', [ws.ids.t2, 'Replicated pottery']], (text) => text.includes('"title":"Replicated pottery"')],
      ['a course run updated', () => COURSES, () => ws.fullKey, () => ["UPDATE course_runs SET status = 'unpublished' WHERE id = $1", [ws.ids.r5]], (text) => !text.includes(ws.ids.r5!)],
      ['a session inserted', () => COURSES, () => ws.fullKey, () => ["INSERT INTO sessions (workspace_id, course_run_id, starts_at, duration_minutes, time_zone, location) VALUES ($1, $2, '2027-05-01T10:00:00Z', 45, 'UTC', 'Replicated room')", [ws.workspaceId, ws.ids.r1]], (text) => text.includes('"location":"Replicated room"')],
      ['a session deleted', () => COURSES, () => ws.fullKey, () => ['DELETE FROM sessions WHERE id = $1', [ws.ids.s4]], (text) => !text.includes(ws.ids.s4!)],
      ['a booking inserted', () => BOOKINGS, () => ws.bookingsKey, () => ["INSERT INTO bookings (id, workspace_id, course_run_id, source, status) VALUES ('bkg_0123456789abcdef0123456789abcdef', $1, $2, 'api', 'confirmed')", [ws.workspaceId, ws.ids.r1]], (text) => bookingOf(text, 'bkg_0123456789abcdef0123456789abcdef') !== undefined],
      ['a booking updated', () => BOOKINGS, () => ws.bookingsKey, () => ["UPDATE bookings SET status = 'expired' WHERE id = $1", [ws.ids.b6]], (text) => bookingOf(text, ws.ids.b6!)?.status === 'expired'],
      ['a booking deleted', () => BOOKINGS, () => ws.bookingsKey, () => ['DELETE FROM bookings WHERE id = $1', [ws.ids.b3]], (text) => bookingOf(text, ws.ids.b3!) === undefined],
      ['a participant updated', () => BOOKINGS, () => ws.fullKey, () => ['UPDATE participants SET name = $2 WHERE booking_id = $1', [ws.ids.b5, 'Replicated Person']], (text) => bookingOf(text, ws.ids.b5!)?.participant?.name === 'Replicated Person'],
      ['a participant inserted', () => BOOKINGS, () => ws.fullKey, () => ["INSERT INTO participants (booking_id, name, email) VALUES ($1, 'New Person', 'new@replica.example')", [ws.ids.b7]], (text) => bookingOf(text, ws.ids.b7!)?.participant?.name === 'New Person'],
      ['a participant deleted', () => BOOKINGS, () => ws.fullKey, () => ['DELETE FROM participants WHERE booking_id = $1', [ws.ids.b2]], (text) => bookingOf(text, ws.ids.b2!)?.participant === undefined],
    ];

    it.each(cases)('%s is in the next answer', async (_what, path, key, change, shows) => {
      const options = { key: key() };
      expect(shows((await cached(path(), options)).text)).toBe(false);
      await write([change()], 'replica');
      expect(shows((await fresh(path(), options)).text)).toBe(true);
    });
  });

  it.each(['origin', 'replica'] as const)('COPY into a table (%s role) is in the next answer', async (role) => {
    const ws = await seedWorkspace(db, contractFixture(`Copy ${role}`, 8));
    // In the contract fixture every seventh booking (b0 among them) has no participant.
    expect(bookingOf((await cached(BOOKINGS, { key: ws.fullKey })).text, ws.ids.b0!)?.participant).toBeUndefined();
    await withServerFile(sql, target, `SELECT ${idLiteral(ws.ids.b0!)}, 'Copied Person', 'copied@copy.example'`, (file) =>
      write([[`COPY participants (booking_id, name, email) FROM '${file}' WITH (FORMAT csv)`]], role),
    );
    expect(bookingOf((await fresh(BOOKINGS, { key: ws.fullKey })).text, ws.ids.b0!)?.participant).toEqual({ name: 'Copied Person', email: 'copied@copy.example' });
  });

  it('a delete that cascades (a booking with its participant, a course run with its sessions) is in the next answer', async () => {
    const ws = await seedWorkspace(db, contractFixture('Cascade', 8));
    await cached(BOOKINGS, { key: ws.fullKey });
    await write([['DELETE FROM bookings WHERE id = $1', [ws.ids.b1]]]);
    expect(bookingOf((await fresh(BOOKINGS, { key: ws.fullKey })).text, ws.ids.b1!)).toBeUndefined();
    expect((await sql.query('SELECT 1 FROM participants WHERE booking_id = $1', [ws.ids.b1])).rowCount).toBe(0);
    expect((await cached(COURSES, { key: ws.fullKey })).text).toContain(ws.ids.s6!);
    await write([['DELETE FROM course_runs WHERE id = $1', [ws.ids.r5]]]);
    expect((await fresh(COURSES, { key: ws.fullKey })).text).not.toContain(ws.ids.s6!);
  });

  it.each(['origin', 'replica'] as const)('TRUNCATE, and TRUNCATE … CASCADE (%s role), are in the next answer', async (role) => {
    const ws = await seedWorkspace(db, contractFixture(`Truncate ${role}`, 8));
    expect(bookingsIn((await cached(BOOKINGS, { key: ws.fullKey })).text).some((booking) => booking.participant)).toBe(true);
    await write([['TRUNCATE participants']], role);
    expect(bookingsIn((await fresh(BOOKINGS, { key: ws.fullKey })).text).some((booking) => booking.participant)).toBe(false);
    await cached(BOOKINGS, { key: ws.fullKey });
    // Cascades to the webhook events of the bookings.
    await write([['TRUNCATE bookings CASCADE']], role);
    expect(bookingsIn((await fresh(BOOKINGS, { key: ws.fullKey })).text)).toEqual([]);
  });

  it('a restore that loads other data with triggers disabled and writes data_versions back with the counts of a cached answer: the next answer and the feed\'s ETag are new; after migrate, replica-role writes are seen again', async () => {
    const ws = await seedWorkspace(db, contractFixture('Restore', 8));
    const feed = (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL })).path;
    await cached(BOOKINGS, { key: ws.fullKey });
    const etag = (await cached(feed)).headers.etag!;
    const [counted, slots] = [await count(ws.workspaceId), await slotsOf(ws.workspaceId)];

    await write([
      ...withTriggersDisabled('participants', [["UPDATE participants SET email = 'restored@example.com' WHERE booking_id = $1", [ws.ids.b1]]]),
      ...withTriggersDisabled('sessions', [["UPDATE sessions SET location = 'Restored room' WHERE id = $1", [ws.ids.s1]]]),
      ...restoreSlots(ws.workspaceId, slots),
    ]);
    // The same count as the cached answers': only the slots' rows are new.
    expect(await count(ws.workspaceId)).toBe(counted);
    expect(bookingOf((await fresh(BOOKINGS, { key: ws.fullKey })).text, ws.ids.b1!)?.participant?.email).toBe('restored@example.com');
    const revalidated = await served(api, feed, { headers: [['If-None-Match', etag]] });
    expect([revalidated.status, revalidated.cache]).toEqual([200, 'miss']);
    expect(revalidated.headers.etag).not.toBe(etag);
    expect(revalidated.text).toContain('LOCATION:Restored room');

    // ENABLE TRIGGER ALL made the replica-role triggers ordinary; every start (and admin -- migrate) gives them their role back.
    await migrate(db);
    await cached(BOOKINGS, { key: ws.fullKey });
    await write([["UPDATE participants SET email = 'erased@example.com' WHERE booking_id = $1", [ws.ids.b1]]], 'replica');
    expect(bookingOf((await fresh(BOOKINGS, { key: ws.fullKey })).text, ws.ids.b1!)?.participant?.email).toBe('erased@example.com');
  });

  it('after a restore put older counts back, a write that brings them to a count served before the restore is in the next answer', async () => {
    const ws = await seedWorkspace(db, contractFixture('Rewound', 8));
    const dumped = await slotsOf(ws.workspaceId);
    await write([["UPDATE participants SET email = 'before@example.com' WHERE booking_id = $1", [ws.ids.b1]]]);
    await cached(BOOKINGS, { key: ws.fullKey });
    const countServed = await count(ws.workspaceId);

    // The dump taken before that write, restored: its data and its counts.
    await write([
      ...withTriggersDisabled('participants', [["UPDATE participants SET email = 'p1@rewound.example' WHERE booking_id = $1", [ws.ids.b1]]]),
      ...restoreSlots(ws.workspaceId, dumped),
    ]);
    await write([["UPDATE participants SET email = 'after@example.com' WHERE booking_id = $1", [ws.ids.b1]]]);
    expect(await count(ws.workspaceId)).toBe(countServed);
    expect(bookingOf((await fresh(BOOKINGS, { key: ws.fullKey })).text, ws.ids.b1!)?.participant?.email).toBe('after@example.com');
  });

  // Last: it empties data_versions for every workspace of this database.
  it('with data_versions emptied, nothing is served from or stored in the cache (bypass) and the feed\'s ETag is its body\'s, until the next write caches again', async () => {
    const ws = await seedWorkspace(db, contractFixture('Emptied', 8));
    const feed = (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL })).path;
    await cached(COURSES, { key: ws.fullKey });
    const versioned = (await cached(feed)).headers.etag!;
    await write([['TRUNCATE data_versions']]);
    for (let i = 0; i < 2; i += 1) await fresh(COURSES, { key: ws.fullKey }, 'bypass');
    const unversioned = await fresh(feed, {}, 'bypass');
    expect(unversioned.headers.etag).not.toBe(versioned);
    const revalidated = await served(api, feed, { headers: [['If-None-Match', unversioned.headers.etag!]] });
    expect([revalidated.status, revalidated.text]).toEqual([304, '']);

    await write([['UPDATE course_templates SET title = $2 WHERE id = $1', [ws.ids.t2, 'Pottery after the emptying']]]);
    expect((await fresh(COURSES, { key: ws.fullKey })).text).toContain('"title":"Pottery after the emptying"');
    await cached(COURSES, { key: ws.fullKey });
    const again = await fresh(feed);
    expect(again.headers.etag).not.toBe(unversioned.headers.etag);
    expect((await served(api, feed, { headers: [['If-None-Match', again.headers.etag!]] })).status).toBe(304);
  });
});
