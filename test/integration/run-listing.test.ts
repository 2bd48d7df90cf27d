import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { PieceVersionStore, type PieceListing } from '../../src/answer-cache/piece-version-store.ts';
import { cacheSources } from '../../src/graphql/cache-sources.ts';
import { createSchema } from '../../src/graphql/schema.ts';
import { serviceModel } from '../../src/model/service-model.ts';
import { openTestDatabase } from '../support/databases.ts';
import { OWNER_EMAIL, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/**
 * The listing of a workspace's runs after a change reads what changed since the kept listing, and
 * is the listing a full read gives: the changed runs alone come back from the database, each put
 * where the order puts it; a change elsewhere comes back as nothing; a deleted run is caught by
 * the count and the runs are listed whole again.
 *
 * The mark is the oldest transaction still running on the whole server when the kept listing was
 * read. On PostgreSQL, other test files' transactions held open then hold it back, and runs written
 * since they began come back too, unchanged; the listing is exact all the same. So there the runs
 * that come back are checked to hold the changed ones, the others unchanged; on the embedded
 * database, where no other transaction runs, to be exactly the changed ones.
 */

const RUNS = 30;
const day = (n: number) => new Date(Date.UTC(2027, 0, 1) + n * 86_400_000).toISOString();

function fixture(name: string) {
  return {
    workspace: { name },
    members: [{ ref: 'owner', email: OWNER_EMAIL, name: 'Olivia Owner', role: 'owner' }],
    courseTemplates: [0, 1, 2].map((t) => ({ ref: `t${t}`, title: `Course ${t}`, description: `About ${t}` })),
    courseRuns: Array.from({ length: RUNS }, (_, r) => ({
      ref: `r${r}`,
      template: `t${r % 3}`,
      status: 'published',
      sessions: [{ ref: `s${r}`, startsAt: day((r * 7) % 25), durationMinutes: 60, timeZone: 'UTC', location: 'Room' }],
    })),
  };
}

describeOnEachDatabase('the listing of changed runs on %s', (target) => {
  let db: Database;
  let sql: pg.Client;
  let ws: SeededWorkspace;
  let other: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, fixture('Listed'));
    other = await seedWorkspace(db, fixture('Elsewhere'));
    sql = new pg.Client({ connectionString: db.connectionString });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    await db?.close();
  });

  const model = serviceModel();
  const pieceVersions = new PieceVersionStore(cacheSources(createSchema(model), model.registry));
  const whole = () => pieceVersions.listing('courses', db, ws.workspaceId, null);
  let before: PieceListing;
  /** The listing after `change`, from the one before it, checked against a full read. */
  async function afterChange(change: () => Promise<unknown>): Promise<PieceListing> {
    before = await whole();
    await change();
    const next = await pieceVersions.listing('courses', db, ws.workspaceId, before);
    expect(next.pieces).toEqual((await whole()).pieces);
    return next;
  }
  /** The runs that came back are `expected`, and on PostgreSQL perhaps others unchanged since `before` (see above). */
  function expectBack(next: PieceListing, expected: readonly string[]): void {
    const back = [...next.changed!.keys()];
    expect(back).toEqual(expect.arrayContaining([...expected]));
    const others = back.filter((id) => !expected.includes(id));
    for (const id of others) expect(next.changed!.get(id) ?? undefined, id).toBe(before.pieces.find((piece) => piece.id === id)?.version);
    if (target === 'embedded') expect(others).toEqual([]);
  }

  it('the first listing reads every listed run, in order, with a mark and no change set', async () => {
    const listing = await whole();
    expect(listing.pieces).toHaveLength(RUNS);
    expect(listing.changed).toBeUndefined();
    expect(listing.mark).toMatch(/^\d+$/);
  });

  it('one session edited: that run alone comes back, with its new version', async () => {
    const next = await afterChange(() => sql.query("UPDATE sessions SET location = 'Next door' WHERE id = $1", [ws.ids.s4]));
    expectBack(next, [ws.ids.r4!]);
  });

  it('resources.course-order: a session moved across the order: its run alone comes back, in its new place', async () => {
    const next = await afterChange(() => sql.query('UPDATE sessions SET starts_at = $2 WHERE id = $1', [ws.ids.s2, day(40)]));
    expectBack(next, [ws.ids.r2!]);
    expect(next.pieces.at(-1)!.id).toBe(ws.ids.r2);
    expect(before.pieces.at(-1)!.id).not.toBe(ws.ids.r2);
  });

  it('a run hidden and shown again, a run inserted first: each comes back, listed or not', async () => {
    const hidden = await afterChange(() => sql.query(`UPDATE course_runs SET status = 'draft' WHERE id = $1`, [ws.ids.r7]));
    expectBack(hidden, [ws.ids.r7!]);
    expect(hidden.changed!.get(ws.ids.r7!)).toBeNull();
    const shown = await afterChange(() => sql.query(`UPDATE course_runs SET status = 'published' WHERE id = $1`, [ws.ids.r7]));
    expectBack(shown, [ws.ids.r7!]);
    expect(shown.changed!.get(ws.ids.r7!)).toEqual(expect.any(String));
    const inserted = await afterChange(() =>
      sql.query(
        `WITH r AS (INSERT INTO course_runs (workspace_id, template_id, status) VALUES ($1, $2, 'published') RETURNING id)
         INSERT INTO sessions (workspace_id, course_run_id, starts_at, duration_minutes, time_zone) SELECT $1, r.id, $3, 30, 'UTC' FROM r`,
        [ws.workspaceId, ws.ids.t0, day(-5)],
      ),
    );
    expectBack(inserted, [inserted.pieces[0]!.id]);
    expect(before.pieces.map((piece) => piece.id)).not.toContain(inserted.pieces[0]!.id);
  });

  it("a template's title: every run that shares it comes back, and no other", async () => {
    const next = await afterChange(() => sql.query(`UPDATE course_templates SET title = 'Renamed' WHERE id = $1`, [ws.ids.t1]));
    const sharing = (await sql.query<{ id: string }>('SELECT id FROM course_runs WHERE template_id = $1', [ws.ids.t1])).rows.map((row) => row.id);
    expectBack(next, sharing);
  });

  it("another workspace's change: nothing comes back", async () => {
    const next = await afterChange(() => sql.query("UPDATE sessions SET location = 'Elsewhere' WHERE id = $1", [other.ids.s3]));
    expectBack(next, []);
  });

  it('a run deleted: the count catches it, and every run is listed again', async () => {
    const next = await afterChange(() => sql.query('DELETE FROM course_runs WHERE id = $1', [ws.ids.r9]));
    expect(next.changed).toBeUndefined();
    expect(next.pieces.map((piece) => piece.id)).not.toContain(ws.ids.r9);
  });

  it('a change rolled back: nothing comes back', async () => {
    const next = await afterChange(async () => {
      await sql.query('BEGIN');
      await sql.query("UPDATE sessions SET location = 'Never' WHERE workspace_id = $1", [ws.workspaceId]);
      await sql.query('ROLLBACK');
    });
    expectBack(next, []);
  });
});
