import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { readDemoFixture } from '../../src/demo/demo-fixture.ts';
import { importFixture } from '../../src/fixtures/import-fixture.ts';
import { InputError } from '../../src/input-error.ts';
import { openTestDatabase } from '../support/databases.ts';
import { contractFixture } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const TABLES = ['workspaces', 'members', 'course_templates', 'course_runs', 'sessions', 'bookings', 'participants'];

describeOnEachDatabase('fixture import on %s', (target) => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase(target);
  });
  afterAll(async () => {
    await db?.close();
  });

  const counts = async () => {
    const result: Record<string, number> = {};
    for (const table of TABLES) result[table] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
    return result;
  };

  const refused = async (fixture: unknown, message: RegExp, options: { workspaceId?: string } = {}) => {
    const before = await counts();
    const error = await importFixture(db, fixture, options).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(message);
    expect(await counts()).toEqual(before);
  };

  it('imports a new workspace with every element and returns an id per ref', async () => {
    const fixture = contractFixture('Import', 12);
    const result = await importFixture(db, fixture, {});
    const refs = [
      ...fixture.members.map((m) => m.ref),
      ...fixture.courseTemplates.map((t) => t.ref),
      ...fixture.courseRuns.flatMap((r) => [r.ref, ...r.sessions.map((s) => s.ref)]),
      ...fixture.bookings.map((b) => b.ref),
    ];
    expect(Object.keys(result.ids).sort()).toEqual(refs.sort());
    const booking = await db.query('SELECT b.source, b.status, b.created_at, p.email FROM bookings b LEFT JOIN participants p ON p.booking_id = b.id WHERE b.id = $1', [result.ids.b1]);
    expect(booking.rows[0]).toEqual({ source: 'public_page', status: 'confirmed', created_at: new Date('2026-07-01T00:01:00.000Z'), email: 'p1@import.example' });
    const session = await db.query('SELECT course_run_id, time_zone, duration_minutes FROM sessions WHERE id = $1', [result.ids.s4]);
    expect(session.rows[0]).toEqual({ course_run_id: result.ids.r2, time_zone: 'America/New_York', duration_minutes: 120 });
  });

  it('import rollback: a fixture whose last booking breaks a database rule writes nothing at all', async () => {
    const fixture = contractFixture('Rollback', 8);
    fixture.bookings.at(-1)!.participant = { name: 'Last', email: 'last@rollback.example' };
    // A rule only the database knows, hit by the very last row the import writes.
    await db.query("ALTER TABLE participants ADD CONSTRAINT test_refuses_last CHECK (email <> 'last@rollback.example')");
    try {
      await refused(fixture, /The fixture is refused, nothing was written/);
    } finally {
      await db.query('ALTER TABLE participants DROP CONSTRAINT test_refuses_last');
    }
    const names = await db.query("SELECT 1 FROM workspaces WHERE name = 'Rollback'");
    expect(names.rowCount).toBe(0);
  });

  it('import rollback: an unknown ref in the last booking is refused whole, naming the element', async () => {
    const fixture = contractFixture('Unknown ref', 8);
    fixture.bookings.at(-1)!.courseRun = 'r404';
    await refused(fixture, /bookings\[7\] \(ref "b7"\): courseRun "r404" is not a known course run ref/);
  });

  it.each([
    ['a duplicate ref', (f: ReturnType<typeof contractFixture>) => void (f.courseTemplates[1]!.ref = 't1'), /courseTemplates\[1\] \(ref "t1"\): duplicate ref/],
    ['a ref of the wrong kind', (f: ReturnType<typeof contractFixture>) => void (f.bookings[0]!.courseRun = 't1'), /bookings\[0\] \(ref "b0"\): courseRun "t1" is a course template, not a course run/],
    ['a bad enum', (f: ReturnType<typeof contractFixture>) => void ((f.bookings[2] as { status: string }).status = 'paid'), /bookings\[2\] \(ref "b2"\): status "paid"/],
    ['an unknown time zone', (f: ReturnType<typeof contractFixture>) => void (f.courseRuns[0]!.sessions[1]!.timeZone = 'Mars/Olympus'), /courseRuns\[0\]\.sessions\[1\] \(ref "s2"\): timeZone "Mars\/Olympus" is not a known IANA time zone/],
    ['a non-positive duration', (f: ReturnType<typeof contractFixture>) => void (f.courseRuns[1]!.sessions[0]!.durationMinutes = 0), /courseRuns\[1\]\.sessions\[0\] \(ref "s4"\): durationMinutes 0 must be positive/],
    ['a malformed timestamp', (f: ReturnType<typeof contractFixture>) => void (f.bookings[3]!.createdAt = '2026-02-30T10:00:00Z'), /bookings\[3\] \(ref "b3"\): createdAt "2026-02-30T10:00:00Z" is not an ISO 8601/],
    ['a wrong type', (f: ReturnType<typeof contractFixture>) => void ((f.courseRuns[0]!.sessions[0] as { durationMinutes: unknown }).durationMinutes = '90'), /courseRuns\[0\]\.sessions\[0\] \(ref "s1"\): durationMinutes "90"/],
    ['an unknown key', (f: ReturnType<typeof contractFixture>) => void ((f.members[0] as Record<string, unknown>).phone = '1'), /members\[0\] \(ref "owner"\): .*phone/],
    ['updatedAt before createdAt', (f: ReturnType<typeof contractFixture>) => void (f.bookings[1]!.updatedAt = '2020-01-01T00:00:00.000Z'), /bookings\[1\] \(ref "b1"\): updatedAt .*before createdAt/],
  ])('refuses %s whole, naming the offending element', async (_name, spoil, message) => {
    const fixture = contractFixture('Spoiled', 6);
    spoil(fixture);
    await refused(fixture, message);
  });

  it('lists every problem of a fixture at once', async () => {
    const fixture = contractFixture('Many problems', 6);
    fixture.courseRuns[0]!.sessions[0]!.timeZone = 'Nowhere/City';
    fixture.bookings[5]!.courseRun = 'r999';
    (fixture.bookings[4] as { source: string }).source = 'fax';
    const error = (await importFixture(db, fixture, {}).catch((caught: unknown) => caught)) as Error;
    expect(error.message).toContain('s1');
    expect(error.message).toContain('b4');
  });

  it('refuses what is not a fixture at all', async () => {
    await refused(null, /fixture/);
    await refused([], /fixture/);
    await refused({ workspace: { name: '' } }, /workspace/);
    await refused({ courseTemplates: [] }, /workspace: is required/);
  });

  it('adds a fixture to an existing workspace, whose members may then be named by e-mail', async () => {
    const first = await importFixture(db, contractFixture('Existing', 2), {});
    const addition = {
      courseTemplates: [{ ref: 'extra', title: 'Extra course', description: '' }],
      courseRuns: [{ ref: 'xr', template: 'extra', status: 'published', sessions: [] }],
      bookings: [],
    };
    const result = await importFixture(db, addition, { workspaceId: first.workspaceId });
    expect(result.workspaceId).toBe(first.workspaceId);
    const runs = await db.query('SELECT count(*)::int AS n FROM course_runs WHERE workspace_id = $1', [first.workspaceId]);
    expect(runs.rows[0]).toEqual({ n: 8 });
    await refused({ members: [{ ref: 'again', email: 'owner@seed.example', name: 'Again', role: 'member' }] }, /already exists/, { workspaceId: first.workspaceId });
    await refused(addition, /No workspace with id "ws_nope"/, { workspaceId: 'ws_nope' });
  });

  it('imports the bundled demo: every source and status, drafts, unpublished runs, cancelled sessions, runs without sessions, several time zones', async () => {
    const demo = (await readDemoFixture()).fixture as ReturnType<typeof contractFixture>;
    const { workspaceId } = await importFixture(db, demo, {});
    const stats = await db.query<Record<string, number>>(
      `SELECT (SELECT count(*)::int FROM course_templates WHERE workspace_id = $1) AS templates,
              (SELECT count(*)::int FROM bookings WHERE workspace_id = $1) AS bookings,
              (SELECT count(DISTINCT source)::int FROM bookings WHERE workspace_id = $1) AS sources,
              (SELECT count(DISTINCT status)::int FROM bookings WHERE workspace_id = $1) AS statuses,
              (SELECT count(*)::int FROM bookings b WHERE workspace_id = $1 AND NOT EXISTS (SELECT 1 FROM participants p WHERE p.booking_id = b.id)) AS without_participant,
              (SELECT count(*)::int FROM course_runs WHERE workspace_id = $1 AND status = 'draft') AS drafts,
              (SELECT count(*)::int FROM course_runs WHERE workspace_id = $1 AND status = 'unpublished') AS unpublished,
              (SELECT count(*)::int FROM sessions WHERE workspace_id = $1 AND status = 'cancelled') AS cancelled,
              (SELECT count(*)::int FROM course_runs r WHERE workspace_id = $1 AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.course_run_id = r.id)) AS without_sessions,
              (SELECT count(DISTINCT time_zone)::int FROM sessions WHERE workspace_id = $1) AS zones`,
      [workspaceId],
    );
    const row = stats.rows[0]!;
    expect(row.templates).toBeGreaterThanOrEqual(8);
    expect(row.bookings).toBeGreaterThanOrEqual(150);
    expect(row).toMatchObject({ sources: 4, statuses: 5 });
    for (const name of ['without_participant', 'drafts', 'unpublished', 'cancelled', 'without_sessions']) expect(row[name], name).toBeGreaterThan(0);
    expect(row.zones).toBeGreaterThanOrEqual(3);
  });
});
