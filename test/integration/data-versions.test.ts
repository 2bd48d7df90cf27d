import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { readDataVersion } from '../../src/db/data-versions.ts';
import { resources } from '../../src/db/resources.ts';
import { importDemo } from '../../src/demo/demo.ts';
import { importFixture } from '../../src/fixtures/import-fixture.ts';
import { databaseTargets, openTestDatabase } from '../support/databases.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';

// pg_trigger.tgtype bits (PostgreSQL's trigger.h).
const ROW = 1 << 0;
const BEFORE = 1 << 1;
const EVENTS = { INSERT: 1 << 2, DELETE: 1 << 3, UPDATE: 1 << 4, TRUNCATE: 1 << 5 } as const;

describe.each(databaseTargets())('data versions on %s', (target) => {
  let db: Database;
  let ws: SeededWorkspace;
  let other: SeededWorkspace;
  /** A client of its own: every change here is plain SQL, not the service's code. */
  let sql: pg.Client;

  const versions = async () => [await readDataVersion(db, ws.workspaceId), await readDataVersion(db, other.workspaceId)];

  /** Runs a statement and returns how the two workspaces' versions moved. */
  const moved = async (text: string, values: unknown[] = []) => {
    const [before, beforeOther] = await versions();
    await sql.query(text, values);
    const [after, afterOther] = await versions();
    return { mine: after! - before!, other: afterOther! - beforeOther! };
  };

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Versions', 6));
    other = await seedWorkspace(db, contractFixture('Other', 6));
    sql = new pg.Client({ connectionString: db.connectionString });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await db?.close();
  });

  it('every resource of the registry declares its workspace, and its table moves the data version after each INSERT, UPDATE, DELETE and TRUNCATE statement', async () => {
    const triggers = await db.query<{ table: string; tgtype: number; enabled: string }>(
      `SELECT c.relname AS table, t.tgtype, t.tgenabled AS enabled
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
        WHERE NOT t.tgisinternal AND p.proname LIKE 'bump%data_versions%'`,
    );
    for (const resource of resources) {
      expect(resource.workspaceField ?? resource.workspaceThrough, resource.name).toBeDefined();
      const own = triggers.rows.filter((row) => row.table === resource.table);
      // Statement-level, after the statement, always enabled.
      for (const row of own) expect([row.tgtype & ROW, row.tgtype & BEFORE, row.enabled], resource.table).toEqual([0, 0, 'O']);
      const events = own.reduce((all, row) => all | row.tgtype, 0);
      for (const [event, bit] of Object.entries(EVENTS)) expect(events & bit, `${resource.table} ${event}`).toBe(bit);
    }
  });

  it('a new workspace starts with a version of its own', async () => {
    const { workspaceId } = await importFixture(db, contractFixture('Fresh', 1), {});
    expect(await readDataVersion(db, workspaceId)).toBeGreaterThan(0);
    expect(await readDataVersion(db, 'ws_unknown')).toBe(0);
  });

  it('a committed statement on any table of an answer moves the version of its workspace, and only of its workspace', async () => {
    const changes: Array<[string, string, unknown[]]> = [
      ['workspaces', 'UPDATE workspaces SET name = $2 WHERE id = $1', [ws.workspaceId, 'Versions renamed']],
      ['course_templates', 'UPDATE course_templates SET title = $2 WHERE id = $1', [ws.ids.t1, 'First Aid, revised']],
      ['course_runs', "UPDATE course_runs SET status = 'unpublished' WHERE id = $1", [ws.ids.r5]],
      ['sessions', "UPDATE sessions SET location = 'Room 12' WHERE id = $1", [ws.ids.s1]],
      ['sessions', "INSERT INTO sessions (workspace_id, course_run_id, starts_at, duration_minutes, time_zone) VALUES ($1, $2, '2027-05-01T10:00:00Z', 45, 'UTC')", [ws.workspaceId, ws.ids.r1]],
      ['sessions', 'DELETE FROM sessions WHERE id = $1', [ws.ids.s6b]],
      ['bookings', "UPDATE bookings SET status = 'cancelled' WHERE id = $1", [ws.ids.b1]],
      ['bookings', "INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'api', 'pending')", [ws.workspaceId, ws.ids.r1]],
      ['participants', 'UPDATE participants SET name = $2 WHERE booking_id = $1', [ws.ids.b1, 'Renamed Person']],
      ['participants', 'DELETE FROM participants WHERE booking_id = $1', [ws.ids.b2]],
      ['participants', "INSERT INTO participants (booking_id, name, email) VALUES ($1, 'New Person', 'new@versions.example')", [ws.ids.b2]],
      ['bookings', 'DELETE FROM bookings WHERE id = $1', [ws.ids.b3]],
      ['course_templates', "INSERT INTO course_templates (workspace_id, title) VALUES ($1, 'Another course')", [ws.workspaceId]],
    ];
    for (const [table, text, values] of changes) {
      const { mine, other: theirs } = await moved(text, values);
      expect(mine, `${table}: ${text}`).toBeGreaterThan(0);
      expect(theirs, `${table}: ${text}`).toBe(0);
    }
  });

  it('a statement that changes no row moves no version', async () => {
    expect(await moved("UPDATE bookings SET status = 'cancelled' WHERE id = 'bkg_none'")).toEqual({ mine: 0, other: 0 });
  });

  it('a participant moved from a booking of one workspace to a booking of another moves both versions', async () => {
    // In the contract fixture every seventh booking (b0 among them) has no participant.
    expect((await sql.query('SELECT 1 FROM participants WHERE booking_id = $1', [other.ids.b0])).rowCount).toBe(0);
    const change = await moved('UPDATE participants SET booking_id = $2 WHERE booking_id = $1', [ws.ids.b4, other.ids.b0]);
    expect(change.mine).toBeGreaterThan(0);
    expect(change.other).toBeGreaterThan(0);
  });

  it('a rolled-back change moves no version', async () => {
    const before = await versions();
    await sql.query('BEGIN');
    await sql.query('UPDATE course_templates SET title = $2 WHERE id = $1', [ws.ids.t2, 'Never committed']);
    await sql.query("INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'api', 'pending')", [ws.workspaceId, ws.ids.r1]);
    await sql.query('ROLLBACK');
    expect(await versions()).toEqual(before);
  });

  it('concurrent writing transactions of one workspace each move its version: none is lost', async () => {
    const before = await readDataVersion(db, ws.workspaceId);
    const writers = 8;
    await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        db.transaction(async (tx) => {
          await tx.query("INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'widget', 'pending')", [ws.workspaceId, ws.ids.r2]);
          await tx.query('UPDATE sessions SET duration_minutes = $2 WHERE id = $1', [ws.ids.s4, 60 + i]);
        }),
      ),
    );
    expect((await readDataVersion(db, ws.workspaceId)) - before).toBeGreaterThanOrEqual(writers);
  });

  it('an import into an existing workspace and the demo import move versions too', async () => {
    const [before] = await versions();
    await importFixture(db, { members: [], courseTemplates: [{ ref: 'x', title: 'Imported' }], courseRuns: [], bookings: [] }, { workspaceId: ws.workspaceId });
    expect(await readDataVersion(db, ws.workspaceId)).toBeGreaterThan(before!);
    const demo = await importDemo(db);
    expect(await readDataVersion(db, demo.workspaceId)).toBeGreaterThan(0);
  });

  it('TRUNCATE, which names no rows, moves every workspace', async () => {
    const before = await versions();
    await sql.query('TRUNCATE participants');
    const after = await versions();
    expect(after[0]).toBeGreaterThan(before[0]!);
    expect(after[1]).toBeGreaterThan(before[1]!);
  });
});
