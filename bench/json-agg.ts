/**
 * The physical limit of a cold /courses: PostgreSQL writing the same list as JSON in one
 * statement (json_agg over the same rows, in the contract's order), read as text on one
 * connection. Its text differs from the facade's in spacing only; the bench compares the two as
 * parsed values.
 */
import type { Database } from '../src/db/database.ts';

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

const COURSES_AS_JSON = `
  SELECT json_build_object('data', coalesce(json_agg(json_build_object(
      'id', r.id, 'title', t.title, 'description', t.description,
      'sessions', (SELECT coalesce(json_agg(json_build_object(
          'id', s.id, 'startsAt', to_char(s.starts_at AT TIME ZONE 'UTC', ${ISO}), 'durationMinutes', s.duration_minutes,
          'timeZone', s.time_zone, 'location', s.location) ORDER BY s.starts_at, s.id), '[]')
        FROM sessions s WHERE s.course_run_id = r.id AND s.status = 'scheduled')
    ) ORDER BY r.listed_from, r.id), '[]'))::text
  FROM course_runs r JOIN course_templates t ON t.id = r.template_id
  WHERE r.workspace_id = $1 AND r.listed_from IS NOT NULL`;

export async function jsonAggOfCourses(db: Database, workspaceId: string, times: number): Promise<{ ms: number[]; text: string }> {
  return db.withConnection(async (connection) => {
    const ms: number[] = [];
    let text = '';
    for (let i = 0; i < times; i += 1) {
      const started = performance.now();
      const rows = await connection.queryArrays(COURSES_AS_JSON, [workspaceId]);
      ms.push(performance.now() - started);
      text = String(rows[0]![0]);
    }
    return { ms, text };
  });
}
