import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { readDataVersion } from '../../src/answer-cache/data-version-store.ts';
import { migrate } from '../../src/db/migrate.ts';
import { serviceModel } from '../../src/model/service-model.ts';
import { cacheSources, watchedTables } from '../../src/graphql/cache-sources.ts';
import { createSchema } from '../../src/graphql/schema.ts';
import { importDemo } from '../../src/demo/demo.ts';
import { importFixture } from '../../src/fixtures/import-fixture.ts';
import { openTestDatabase } from '../support/databases.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

// pg_trigger.tgtype bits (PostgreSQL's trigger.h).
const ROW = 1 << 0;
const BEFORE = 1 << 1;
const EVENTS = { INSERT: 1 << 2, DELETE: 1 << 3, UPDATE: 1 << 4, TRUNCATE: 1 << 5 } as const;

describeOnEachDatabase('data versions on %s', (target) => {
  let db: Database;
  let ws: SeededWorkspace;
  let other: SeededWorkspace;
  /** A client of its own: every change here is plain SQL, not the service's code. */
  let sql: pg.Client;

  const versions = async (mine = ws) => [await readDataVersion(db, mine.workspaceId), await readDataVersion(db, other.workspaceId)];
  /** The count of a workspace's slots: what the triggers add to. */
  const count = async (workspaceId: string) =>
    Number((await sql.query<{ n: string }>('SELECT coalesce(sum(version), 0) AS n FROM data_versions WHERE workspace_id = $1', [workspaceId])).rows[0]!.n);

  /** Runs statements in one transaction and says whose versions moved: `mine`'s (`ws` unless named) and `other`'s. */
  const moved = async (statements: Array<[string, unknown[]]>, mine = ws) => {
    const [before, beforeOther] = await versions(mine);
    await sql.query('BEGIN');
    for (const [text, values] of statements) await sql.query(text, values);
    await sql.query('COMMIT');
    const [after, afterOther] = await versions(mine);
    return { mine: after !== before, other: afterOther !== beforeOther };
  };
  // PGlite runs every connection on one session: the role is set for the transaction alone.
  const inReplicaRole = (text: string, values: unknown[] = []): Array<[string, unknown[]]> => [['SET LOCAL session_replication_role = replica', []], [text, values]];

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

  it('every resource a cached answer reads declares its workspace, and its table moves the data version after each INSERT, UPDATE, DELETE and TRUNCATE statement, and in replica role after each row', async () => {
    const model = serviceModel();
    const schema = createSchema(model);
    const tables = watchedTables(cacheSources(schema, model.registry));
    const resources = model.registry.all().filter((resource) => tables.includes(resource.table));
    expect(resources).toHaveLength(tables.length);
    expect(resources.length).toBeGreaterThan(0);
    const triggers = await db.query<{ table: string; tgtype: number; enabled: string }>(
      `SELECT c.relname AS table, t.tgtype, t.tgenabled AS enabled
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
        WHERE NOT t.tgisinternal AND p.proname LIKE 'bump%data_versions%'`,
    );
    const eventsOf = (rows: Array<{ tgtype: number }>) => rows.reduce((all, row) => all | row.tgtype, 0) & (EVENTS.INSERT | EVENTS.UPDATE | EVENTS.DELETE | EVENTS.TRUNCATE);
    for (const resource of resources) {
      expect(resource.workspaceField ?? resource.workspaceThrough, resource.name).toBeDefined();
      const own = triggers.rows.filter((row) => row.table === resource.table);
      for (const row of own) expect(row.tgtype & BEFORE, resource.table).toBe(0);
      // Statement triggers for every role but replica (O: origin and local); TRUNCATE in every role (A).
      const statements = own.filter((row) => (row.tgtype & ROW) === 0);
      for (const row of statements) expect(row.enabled, resource.table).toBe(row.tgtype & EVENTS.TRUNCATE ? 'A' : 'O');
      expect(eventsOf(statements), resource.table).toBe(EVENTS.INSERT | EVENTS.UPDATE | EVENTS.DELETE | EVENTS.TRUNCATE);
      // Row triggers for replica role only (R), which is how logical replication applies rows: it fires no statement trigger.
      const rows = own.filter((row) => (row.tgtype & ROW) !== 0);
      for (const row of rows) expect(row.enabled, resource.table).toBe('R');
      expect(eventsOf(rows), resource.table).toBe(EVENTS.INSERT | EVENTS.UPDATE | EVENTS.DELETE);
    }
  });

  it('a new workspace starts with a version of its own', async () => {
    const { workspaceId } = await importFixture(db, contractFixture('Fresh', 1), {});
    expect(await count(workspaceId)).toBeGreaterThan(0);
    expect(await readDataVersion(db, workspaceId)).toEqual(expect.any(String));
    expect(await readDataVersion(db, 'ws_unknown')).toBeNull();
  });

  const changes = (ws: SeededWorkspace): Array<[string, string, unknown[]]> => [
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

  it('a committed statement on any table of an answer moves the version of its workspace, and only of its workspace', async () => {
    for (const [table, text, values] of changes(ws)) {
      expect(await moved([[text, values]]), `${table}: ${text}`).toEqual({ mine: true, other: false });
    }
  });

  it('in replica role, as logical replication applies rows, every insert, update and delete still moves the version of its workspace, and only of its workspace', async () => {
    const replicated = await seedWorkspace(db, contractFixture('Replicated', 6));
    for (const [table, text, values] of changes(replicated)) {
      expect(await moved(inReplicaRole(text, values), replicated), `${table}: ${text}`).toEqual({ mine: true, other: false });
    }
  });

  it('a statement that changes no row moves no version', async () => {
    expect(await moved([["UPDATE bookings SET status = 'cancelled' WHERE id = 'bkg_none'", []]])).toEqual({ mine: false, other: false });
    expect(await moved(inReplicaRole("UPDATE bookings SET status = 'cancelled' WHERE id = 'bkg_none'"))).toEqual({ mine: false, other: false });
  });

  it('a participant moved from a booking of one workspace to a booking of another moves both versions', async () => {
    // In the contract fixture every seventh booking (b0 among them) has no participant.
    expect((await sql.query('SELECT 1 FROM participants WHERE booking_id = $1', [other.ids.b0])).rowCount).toBe(0);
    expect(await moved([['UPDATE participants SET booking_id = $2 WHERE booking_id = $1', [ws.ids.b4, other.ids.b0]]])).toEqual({ mine: true, other: true });
    // And back, in replica role.
    expect(await moved(inReplicaRole('UPDATE participants SET booking_id = $2 WHERE booking_id = $1', [other.ids.b0, ws.ids.b4]))).toEqual({ mine: true, other: true });
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
    const before = await count(ws.workspaceId);
    const writers = 8;
    await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        db.transaction(async (tx) => {
          await tx.query("INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'widget', 'pending')", [ws.workspaceId, ws.ids.r2]);
          await tx.query('UPDATE sessions SET duration_minutes = $2 WHERE id = $1', [ws.ids.s4, 60 + i]);
        }),
      ),
    );
    expect((await count(ws.workspaceId)) - before).toBeGreaterThanOrEqual(writers);
  });

  it('an import into an existing workspace and the demo import move versions too', async () => {
    const before = await count(ws.workspaceId);
    await importFixture(db, { members: [], courseTemplates: [{ ref: 'x', title: 'Imported' }], courseRuns: [], bookings: [] }, { workspaceId: ws.workspaceId });
    expect(await count(ws.workspaceId)).toBeGreaterThan(before);
    const demo = await importDemo(db);
    expect(await count(demo.workspaceId)).toBeGreaterThan(0);
  });

  it('a restore that writes the slots back with counts already read gives a version never read before', async () => {
    const before = await readDataVersion(db, ws.workspaceId);
    const slots = (await sql.query<{ slot: number; version: string }>('SELECT slot, version FROM data_versions WHERE workspace_id = $1', [ws.workspaceId])).rows;
    await sql.query('UPDATE participants SET name = $2 WHERE booking_id = $1', [ws.ids.b1, 'Changed before the restore']);
    // As pg_restore loads a table: the same rows, written anew.
    await sql.query('BEGIN');
    await sql.query('DELETE FROM data_versions WHERE workspace_id = $1', [ws.workspaceId]);
    for (const slot of slots) await sql.query('INSERT INTO data_versions (workspace_id, slot, version) VALUES ($1, $2, $3)', [ws.workspaceId, slot.slot, slot.version]);
    await sql.query('COMMIT');
    const restored = await readDataVersion(db, ws.workspaceId);
    expect(restored).not.toBeNull();
    expect(restored).not.toBe(before);
  });

  it('TRUNCATE, which names no rows, moves every workspace, in replica role too', async () => {
    for (const statements of [[['TRUNCATE participants', []]], inReplicaRole('TRUNCATE participants')] as Array<Array<[string, unknown[]]>>) {
      expect(await moved(statements)).toEqual({ mine: true, other: true });
    }
  });

  it('ALTER TABLE … ENABLE TRIGGER ALL, as pg_restore --disable-triggers runs it after loading a table, makes every trigger ordinary: migrate gives them their roles back, and leaves disabled ones alone', async () => {
    const roles = async () =>
      (
        await sql.query<{ name: string; enabled: string }>(
          `SELECT tgname AS name, tgenabled AS enabled FROM pg_trigger WHERE tgrelid = 'bookings'::regclass AND NOT tgisinternal ORDER BY tgname`,
        )
      ).rows;
    const before = await roles();
    expect(before.filter((row) => row.enabled !== 'O').map((row) => row.name)).toEqual([
      'bookings_data_version_in_replica',
      'bookings_data_version_truncate',
      'bookings_record_created_in_replica',
      'bookings_record_updated_in_replica',
    ]);
    await sql.query('ALTER TABLE bookings DISABLE TRIGGER ALL');
    await migrate(db);
    expect((await roles()).every((row) => row.enabled === 'D')).toBe(true);
    await sql.query('ALTER TABLE bookings ENABLE TRIGGER ALL');
    expect((await roles()).every((row) => row.enabled === 'O')).toBe(true);
    // Meanwhile an ordinary write still moves the version once, and records one event.
    const booking = await sql.query<{ id: string }>("INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'api', 'pending') RETURNING id", [ws.workspaceId, ws.ids.r1]);
    expect((await sql.query('SELECT 1 FROM webhook_events WHERE booking_id = $1', [booking.rows[0]!.id])).rowCount).toBe(1);
    await migrate(db);
    expect(await roles()).toEqual(before);
    expect(await moved(inReplicaRole("UPDATE bookings SET status = 'confirmed' WHERE id = $1", [ws.ids.b2]))).toEqual({ mine: true, other: false });
  });
});
