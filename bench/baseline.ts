/**
 * The hand-written baseline: express + pg, the same Authorization check, one SQL query per
 * endpoint, the same JSON bytes as the facade. It exists only to measure the facade against.
 */
import { createHash } from 'node:crypto';
import express from 'express';
import pg from 'pg';

pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE ?? 10) });
let statements = 0;
const query = <R extends pg.QueryResultRow>(text: string, values: unknown[]) => {
  statements += 1;
  return pool.query<R>(text, values);
};

const KEY = /^bearer +(svc_api_[0-9A-Za-z]{38})$/i;

async function authenticate(header: string | undefined): Promise<{ workspaceId: string; scopes: string[] } | null> {
  const key = KEY.exec(header ?? '')?.[1];
  if (!key) return null;
  const found = await query<{ workspace_id: string; scopes: string[] }>(
    'SELECT workspace_id, scopes FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
    [createHash('sha256').update(key).digest()],
  );
  const row = found.rows[0];
  return row ? { workspaceId: row.workspace_id, scopes: row.scopes } : null;
}

const COURSES = `
  SELECT r.id, t.title, t.description, s.id AS session_id, s.starts_at, s.duration_minutes, s.time_zone, s.location
    FROM course_runs r
    JOIN course_templates t ON t.id = r.template_id
    JOIN sessions s ON s.course_run_id = r.id AND s.status = 'scheduled'
   WHERE r.workspace_id = $1 AND r.status = 'published'
   ORDER BY min(s.starts_at) OVER (PARTITION BY r.id), r.id, s.starts_at, s.id`;

const BOOKINGS = `
  SELECT b.id, b.course_run_id, b.source, b.status, b.created_at, b.updated_at, p.name, p.email
    FROM bookings b LEFT JOIN participants p ON $2 AND p.booking_id = b.id
   WHERE b.workspace_id = $1
   ORDER BY b.created_at DESC, b.id DESC
   LIMIT 100`;

const app = express();
app.disable('x-powered-by');
app.set('etag', false);

app.get('/api/public/v1/courses', async (req, res) => {
  const key = await authenticate(req.headers.authorization);
  if (!key || !key.scopes.includes('courses:read')) return void res.status(key ? 403 : 401).end();
  const rows = (await query(COURSES, [key.workspaceId])).rows as Array<{
    id: string; title: string; description: string; session_id: string; starts_at: Date; duration_minutes: number; time_zone: string; location: string;
  }>;
  const data: Array<{ id: string; title: string; description: string; sessions: unknown[] }> = [];
  let current: (typeof data)[number] | undefined;
  for (const row of rows) {
    if (current?.id !== row.id) {
      current = { id: row.id, title: row.title, description: row.description, sessions: [] };
      data.push(current);
    }
    current.sessions.push({ id: row.session_id, startsAt: row.starts_at.toISOString(), durationMinutes: row.duration_minutes, timeZone: row.time_zone, location: row.location });
  }
  res.set('Cache-Control', 'private, no-store').type('application/json; charset=utf-8').send(JSON.stringify({ data }));
});

app.get('/api/public/v1/bookings', async (req, res) => {
  const key = await authenticate(req.headers.authorization);
  if (!key || !key.scopes.includes('bookings:read')) return void res.status(key ? 403 : 401).end();
  const withParticipant = key.scopes.includes('participants:read');
  const rows = (await query(BOOKINGS, [key.workspaceId, withParticipant])).rows as Array<{
    id: string; course_run_id: string; source: string; status: string; created_at: Date; updated_at: Date; name: string | null; email: string | null;
  }>;
  const data = rows.map((row) => ({
    id: row.id,
    courseRunId: row.course_run_id,
    source: row.source,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    ...(row.name !== null ? { participant: { name: row.name, email: row.email } } : {}),
  }));
  res.set('Cache-Control', 'private, no-store').type('application/json; charset=utf-8').send(JSON.stringify({ data }));
});

app.get('/stats', (_req, res) => void res.json({ statements }));

const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`baseline on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
