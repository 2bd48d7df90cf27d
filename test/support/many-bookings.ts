import type { Database } from '../../src/db/database.ts';

/**
 * `count` more bookings in a seeded workspace, in one statement (importing them one by one takes
 * long), spread over its runs, sources and statuses, a minute apart from 2026-01-01; then ANALYZE,
 * so that PostgreSQL's statistics (which internal GraphQL's cost estimate reads) know them, unless told not to.
 */
export async function addBookings(db: Database, workspaceId: string, count: number, { analyze = true } = {}): Promise<void> {
  await db.query(
    `INSERT INTO bookings (workspace_id, course_run_id, source, status, created_at, updated_at)
     SELECT $1, r.ids[1 + i % r.n], (ARRAY['admin', 'public_page', 'widget', 'api'])[1 + i % 4]::booking_source,
            (ARRAY['pending', 'confirmed', 'waitlisted', 'cancelled', 'expired'])[1 + i % 5]::booking_status,
            timestamptz '2026-01-01T00:00:00Z' + i * interval '1 minute', timestamptz '2026-01-01T00:00:30Z' + i * interval '1 minute'
       FROM generate_series(0, $2::int - 1) AS i,
            (SELECT array_agg(id ORDER BY created_at, id) AS ids, count(*)::int AS n FROM course_runs WHERE workspace_id = $1) AS r`,
    [workspaceId, count],
  );
  // Without it, the statistics are stale: they describe the tables before these rows.
  if (analyze) await db.query('ANALYZE');
}
