import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createFeedToken } from '../../src/calendar/feed-token-store.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/**
 * An answer assembled from the pieces of an earlier one and the pieces that changed is the answer
 * a build of the whole gives, byte for byte: after every change of a random sequence (inserts,
 * updates, deletes of sessions (one moved to another run too), runs, templates, bookings, participants and the workspace; a run
 * hidden by its status; a session moved across the order; a title many runs share), the server
 * with the cache answers exactly as the one without it, which builds every answer in one
 * operation.
 */

const STEPS = 40;
const TEMPLATES = 3;
const RUNS = 14;

/** A small, reproducible generator: a failure names its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Long enough that an answer spans several of the cache's 64 KB chunks, so that chunks are taken again and split apart. */
const LONG = 'Bring a notebook; '.repeat(1_200);

const day = (n: number) => new Date(Date.UTC(2027, 0, 1) + n * 86_400_000).toISOString();

function fixture() {
  return {
    workspace: { name: 'Pieces' },
    members: [{ ref: 'owner', email: OWNER_EMAIL, name: 'Olivia Owner', role: 'owner' }],
    courseTemplates: Array.from({ length: TEMPLATES }, (_, t) => ({ ref: `t${t}`, title: `Course ${t}`, description: `About course ${t}; with, commas. ${LONG}` })),
    courseRuns: Array.from({ length: RUNS }, (_, r) => ({
      ref: `r${r}`,
      template: `t${r % TEMPLATES}`,
      status: r % 5 === 4 ? 'draft' : 'published',
      sessions: Array.from({ length: 3 }, (_, s) => ({
        ref: `s${r}_${s}`,
        startsAt: day((r * 7 + s * 3) % 20),
        durationMinutes: 60,
        timeZone: 'Europe/Berlin',
        location: `Room ${s}`,
        status: s === 2 && r % 3 === 0 ? 'cancelled' : 'scheduled',
      })),
    })),
    bookings: Array.from({ length: 12 }, (_, b) => ({
      ref: `b${b}`,
      courseRun: `r${b % RUNS}`,
      source: 'api',
      status: 'confirmed',
      createdAt: day(b % 6),
      updatedAt: day(b % 6),
      ...(b % 3 === 0 ? {} : { participant: { name: `Person ${b}`, email: `p${b}@pieces.example` } }),
    })),
  };
}

describeOnEachDatabase('answers assembled from pieces on %s', (target) => {
  let db: Database;
  let cached: TestApi;
  let whole: TestApi;
  let sql: pg.Client;
  let ws: SeededWorkspace;
  let feed: string;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    // Every answer after every change, from both servers: more than a key's default rate limit.
    const limits = { RATE_LIMIT_MAX: '100000', FEED_RATE_LIMIT_MAX: '100000' };
    cached = await startTestApi(db, limits);
    whole = await startTestApi(db, { ...limits, RESPONSE_CACHE_MAX_BYTES: '0' });
    sql = new pg.Client({ connectionString: db.connectionString });
    await sql.connect();
    ws = await seedWorkspace(db, fixture());
    feed = (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL })).path;
  });
  afterAll(async () => {
    await sql?.end();
    for (const server of [cached, whole]) await server?.close();
    await db?.close();
  });

  const answers = (): Array<[string, string | undefined]> => [
    ['/api/public/v1/courses', ws.fullKey],
    ['/api/public/v1/bookings', ws.fullKey],
    ['/api/public/v1/bookings', ws.bookingsKey],
    [feed, undefined],
  ];

  async function expectSameAnswers(context: string): Promise<void> {
    for (const [path, key] of answers()) {
      const [a, b] = [await cached.call(path, key ? { key } : {}), await whole.call(path, key ? { key } : {})];
      expect(a.status, `${context}: ${path}`).toBe(200);
      expect(a.text, `${context}: ${path}`).toBe(b.text);
    }
  }

  const ids = async (text: string) => (await sql.query<{ id: string }>(text, [ws.workspaceId])).rows.map((row) => row.id);

  async function pieceCounts(): Promise<{ reused: number; built: number }> {
    const text = await (await fetch(`${cached.server.internalUrl}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
    const count = (outcome: string) => Number(new RegExp(`^response_cache_pieces_total\\{outcome="${outcome}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    return { reused: count('reused'), built: count('built') };
  }

  /** One random change in plain SQL, described for a failure's message. */
  async function change(next: () => number): Promise<string> {
    const pick = <T>(list: readonly T[]): T | undefined => list[Math.floor(next() * list.length)];
    const sessions = await ids('SELECT id FROM sessions WHERE workspace_id = $1 ORDER BY id');
    const runs = await ids('SELECT id FROM course_runs WHERE workspace_id = $1 ORDER BY id');
    const templates = await ids('SELECT id FROM course_templates WHERE workspace_id = $1 ORDER BY id');
    const bookings = await ids('SELECT id FROM bookings WHERE workspace_id = $1 ORDER BY id');
    const session = pick(sessions);
    const run = pick(runs)!;
    const booking = pick(bookings);
    const n = Math.floor(next() * 1000);
    const kinds: Array<[string, () => Promise<unknown>]> = [
      ['session location', () => sql.query('UPDATE sessions SET location = $2 WHERE id = $1', [session, `Room ${n}, floor; ${n % 7}`])],
      ['session moved across the order', () => sql.query('UPDATE sessions SET starts_at = $2 WHERE id = $1', [session, day(n % 40)])],
      ['session moved to another run', () => sql.query('UPDATE sessions SET course_run_id = $2 WHERE id = $1', [session, run])],
      ['session inserted', () => sql.query(`INSERT INTO sessions (workspace_id, course_run_id, starts_at, duration_minutes, time_zone, location) VALUES ($1, $2, $3, 45, 'UTC', 'New')`, [ws.workspaceId, run, day(n % 40)])],
      ['session deleted', () => sql.query('DELETE FROM sessions WHERE id = $1', [session])],
      ['session cancelled or scheduled', () => sql.query(`UPDATE sessions SET status = CASE status WHEN 'scheduled' THEN 'cancelled'::session_status ELSE 'scheduled' END WHERE id = $1`, [session])],
      ['run hidden or shown by its status', () => sql.query('UPDATE course_runs SET status = $2 WHERE id = $1', [run, pick(['published', 'published', 'unpublished', 'draft'])])],
      [
        'run inserted',
        () =>
          sql.query(
            `WITH r AS (INSERT INTO course_runs (workspace_id, template_id, status) VALUES ($1, $2, 'published') RETURNING id)
             INSERT INTO sessions (workspace_id, course_run_id, starts_at, duration_minutes, time_zone) SELECT $1, r.id, $3, 30, 'UTC' FROM r`,
            [ws.workspaceId, pick(templates), day(n % 40)],
          ),
      ],
      ['run deleted', () => sql.query('DELETE FROM course_runs r WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM bookings b WHERE b.course_run_id = r.id)', [run])],
      ['template title many runs share', () => sql.query('UPDATE course_templates SET title = $2 WHERE id = $1', [pick(templates), `Course ${n} "quoted" \\ é 🎨`])],
      ['template description', () => sql.query('UPDATE course_templates SET description = $2 WHERE id = $1', [pick(templates), `Line one\nline ${n} ${LONG.slice(0, n * 20)}`])],
      [
        'booking inserted',
        () => sql.query(`INSERT INTO bookings (workspace_id, course_run_id, source, status, created_at, updated_at) VALUES ($1, $2, 'widget', 'pending', $3, $3)`, [ws.workspaceId, run, day(n % 8)]),
      ],
      ['booking status', () => sql.query(`UPDATE bookings SET status = 'cancelled', updated_at = updated_at + interval '1 minute' WHERE id = $1`, [booking])],
      ['booking deleted', () => sql.query('DELETE FROM bookings WHERE id = $1', [booking])],
      [
        'participant written',
        () => sql.query('INSERT INTO participants (booking_id, name, email) VALUES ($1, $2, $3) ON CONFLICT (booking_id) DO UPDATE SET name = EXCLUDED.name', [booking, `Name ${n}`, `n${n}@pieces.example`]),
      ],
      ['workspace renamed', () => sql.query('UPDATE workspaces SET name = $2 WHERE id = $1', [ws.workspaceId, `Pieces ${n}; team, one`])],
      [
        'rolled back',
        async () => {
          await sql.query('BEGIN');
          await sql.query('DELETE FROM sessions WHERE workspace_id = $1', [ws.workspaceId]);
          await sql.query('ROLLBACK');
        },
      ],
    ];
    const [name, apply] = pick(kinds)!;
    await apply();
    return name;
  }

  it('after every change of a random sequence, each answer is byte-identical to a build of the whole', async () => {
    const seed = Number(process.env.PIECES_SEED ?? Date.now() % 1_000_000);
    const next = random(seed);
    await expectSameAnswers(`seed ${seed}, before any change`);
    const done: string[] = [];
    for (let step = 0; step < STEPS; step += 1) {
      // Sometimes two changes between answers, so that an answer meets more than one.
      done.push(await change(next));
      if (next() < 0.25) done.push(await change(next));
      await expectSameAnswers(`seed ${seed} (PIECES_SEED), after ${done.join(' → ')}`);
    }
    const counts = await pieceCounts();
    expect(counts.reused).toBeGreaterThan(counts.built);
    // A busy machine: each step waits for eight answers, and the embedded database runs one statement at a time.
  }, 240_000);

  it('after one session changed, the next /courses builds that session\'s run alone and reuses the others', async () => {
    const path = '/api/public/v1/courses';
    await cached.call(path, { key: ws.fullKey });
    const listed = (JSON.parse((await cached.call(path, { key: ws.fullKey })).text) as { data: Array<{ sessions: Array<{ id: string }> }> }).data;
    expect(listed.length).toBeGreaterThan(3);
    const before = await pieceCounts();
    await sql.query("UPDATE sessions SET location = 'Moved next door' WHERE id = $1", [listed[1]!.sessions[0]!.id]);
    const answer = await cached.call(path, { key: ws.fullKey });
    expect(answer.text).toBe((await whole.call(path, { key: ws.fullKey })).text);
    const after = await pieceCounts();
    expect(after.built - before.built).toBe(1);
    expect(after.reused - before.reused).toBe(listed.length - 1);
  });
});
