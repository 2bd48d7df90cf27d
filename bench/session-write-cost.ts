/**
 * What the run-row rewrite costs a session write (`npm run bench -- session-writes`): every change
 * to a run's sessions rewrites the run's row in the same transaction (migration
 * 1763801850000_course-run-piece-versions.sql), so that the answer cache reads a run's version from
 * its row. Measured: session updates, each its own transaction, by 10 concurrent writers, with the
 * rewrite and with the function as it was before it (the run written only when its listing moves),
 * in alternating rounds on the same rows; the writers on sessions of ten runs (one each), and on
 * sessions of one run (where the rewrite makes them wait for each other's run-row lock).
 */
import pg from 'pg';
import { migrate } from '../src/db/migrate.ts';
import { importFixture } from '../src/fixtures/import-fixture.ts';
import { openBenchDatabase } from './database.ts';

const WRITES = 2000;
const WRITERS = 10;

/** The function before the rewrite: a run is written only when its listing moves. */
const WITHOUT_REWRITE = `CREATE OR REPLACE FUNCTION refresh_course_run_listings(p_run_ids text[]) RETURNS void LANGUAGE sql AS $$
  UPDATE course_runs r SET listed_from = course_run_listed_from(r)
    FROM (SELECT c.id FROM course_runs c
           WHERE c.id = ANY(p_run_ids) AND c.listed_from IS DISTINCT FROM course_run_listed_from(c)
           ORDER BY c.id FOR NO KEY UPDATE) AS locked
   WHERE r.id = locked.id;
$$`;

export interface SessionWriteVariant {
  name: string;
  /** Writes per second of each round. */
  withRewrite: number[];
  withoutRewrite: number[];
}

export interface SessionWriteCost {
  database: string;
  node: string;
  writes: number;
  writers: number;
  variants: SessionWriteVariant[];
}

async function writesPerSecond(pool: pg.Pool, sessionsOf: (writer: number) => string[]): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      const client = await pool.connect();
      const sessions = sessionsOf(writer);
      try {
        for (let i = 0; i < WRITES / WRITERS; i += 1) {
          await client.query('UPDATE sessions SET location = $2 WHERE id = $1', [sessions[i % sessions.length], `Room ${writer}.${i}`]);
        }
      } finally {
        client.release();
      }
    }),
  );
  return WRITES / ((performance.now() - started) / 1000);
}

export async function measureSessionWriteCost(rounds: number): Promise<SessionWriteCost> {
  const database = await openBenchDatabase();
  try {
    await migrate(database.db);
    const withRewrite = (await database.db.query<{ body: string }>("SELECT pg_get_functiondef('refresh_course_run_listings(text[])'::regprocedure) AS body")).rows[0]!.body;
    const runs = Array.from({ length: WRITERS }, (_, r) => ({
      ref: `r${r}`,
      template: 't',
      status: 'published',
      sessions: Array.from({ length: 10 }, (_, s) => ({ ref: `r${r}s${s}`, startsAt: new Date(Date.UTC(2027, 0, 1 + s, 9)).toISOString(), durationMinutes: 60, timeZone: 'Europe/Berlin', location: 'Room', status: 'scheduled' })),
    }));
    const { ids } = await importFixture(
      database.db,
      { workspace: { name: 'Bench session writes' }, members: [{ ref: 'owner', email: 'owner@writes.example', name: 'Owner', role: 'owner' }], courseTemplates: [{ ref: 't', title: 'Writes' }], courseRuns: runs, bookings: [] },
      {},
    );
    const sessionsOfRun = (r: number) => Array.from({ length: 10 }, (_, s) => ids[`r${r}s${s}`]!);
    const variants: Array<[string, (writer: number) => string[]]> = [
      ['10 writers, each on the sessions of its own run', (writer) => sessionsOfRun(writer)],
      ['10 writers, all on the sessions of one run', (writer) => sessionsOfRun(0).slice(writer).concat(sessionsOfRun(0).slice(0, writer))],
    ];
    const pool = new pg.Pool({ connectionString: database.db.connectionString, max: WRITERS });
    pool.on('error', () => {});
    const results: SessionWriteVariant[] = [];
    try {
      for (const [name, sessionsOf] of variants) {
        const variant: SessionWriteVariant = { name, withRewrite: [], withoutRewrite: [] };
        await writesPerSecond(pool, sessionsOf);
        for (let round = 0; round < rounds; round += 1) {
          for (const rewrite of round % 2 === 0 ? [true, false] : [false, true]) {
            await database.db.query(rewrite ? withRewrite : WITHOUT_REWRITE);
            (rewrite ? variant.withRewrite : variant.withoutRewrite).push(await writesPerSecond(pool, sessionsOf));
          }
        }
        results.push(variant);
      }
    } finally {
      await database.db.query(withRewrite);
      await pool.end();
    }
    return { database: `${database.kind} ${database.version}`, node: process.version, writes: WRITES, writers: WRITERS, variants: results };
  } finally {
    await database.close();
  }
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;

/** The section of docs/benchmarks.md: writes per second with and without the rewrite, the ratio of the medians. */
export function sessionWriteSection(results: SessionWriteCost): string[] {
  const range = (values: readonly number[]) => `${Math.round(median(values))} (${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))})`;
  return [
    `### ${results.database}, Node ${results.node}: ${results.writes} session updates by ${results.writers} writers, each its own transaction`,
    '',
    '| writers | with the run-row rewrite, writes/s median (range) | without it | with / without |',
    '|---|---|---|---|',
    ...results.variants.map((v) => `| ${v.name} | ${range(v.withRewrite)} | ${range(v.withoutRewrite)} | ${(median(v.withRewrite) / median(v.withoutRewrite)).toFixed(2)} × |`),
    '',
  ];
}
