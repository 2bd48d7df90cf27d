import { afterAll, beforeAll, expect, it } from 'vitest';
import { listApiKeys } from '../../src/auth/api-key-store.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { captureStatements } from '../support/statements.ts';
import { startTestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

describeOnEachDatabase('data model rules enforced by the database on %s', (target) => {
  let db: Database;
  let one: SeededWorkspace;
  let two: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    one = await seedWorkspace(db, contractFixture('One', 1));
    two = await seedWorkspace(db, contractFixture('Two', 1));
  });
  afterAll(async () => {
    await db?.close();
  });

  const refusedWith = async (sql: string, values: unknown[], sqlstate: string) => {
    const error = (await db.query(sql, values).catch((caught: unknown) => caught)) as { code?: string };
    expect(error.code, sql).toBe(sqlstate);
  };

  it('a booking and its course run belong to the same workspace', async () => {
    await refusedWith(
      "INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'api', 'pending')",
      [one.workspaceId, two.ids.r1],
      '23503',
    );
  });

  it('a course run uses a template of its own workspace, and a session belongs to a run of its workspace', async () => {
    await refusedWith("INSERT INTO course_runs (workspace_id, template_id) VALUES ($1, $2)", [one.workspaceId, two.ids.t1], '23503');
    await refusedWith(
      "INSERT INTO sessions (workspace_id, course_run_id, starts_at, duration_minutes, time_zone) VALUES ($1, $2, now(), 30, 'UTC')",
      [one.workspaceId, two.ids.r1],
      '23503',
    );
  });

  it('enums, positive durations and IANA time zones are enforced', async () => {
    await refusedWith("INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'fax', 'pending')", [one.workspaceId, one.ids.r1], '22P02');
    await refusedWith("UPDATE course_runs SET status = 'archived' WHERE id = $1", [one.ids.r1], '22P02');
    await refusedWith('UPDATE sessions SET duration_minutes = 0 WHERE id = $1', [one.ids.s1], '23514');
    await refusedWith("UPDATE sessions SET time_zone = 'Mars/Olympus' WHERE id = $1", [one.ids.s1], '23514');
    await refusedWith("UPDATE sessions SET time_zone = '+02:00' WHERE id = $1", [one.ids.s1], '23514');
    await refusedWith("UPDATE members SET role = 'boss' WHERE workspace_id = $1", [one.workspaceId], '22P02');
  });

  it('auth.scope-dependency: an API key with participants:read but not bookings:read cannot be stored, whoever writes it', async () => {
    await refusedWith(
      "UPDATE api_keys SET scopes = ARRAY['participants:read'] WHERE workspace_id = $1",
      [one.workspaceId],
      '23514',
    );
  });

  it('resources.ids: ids are opaque strings, not sequence numbers', async () => {
    const ids = await db.query<{ id: string }>('SELECT id FROM workspaces UNION ALL SELECT id FROM bookings UNION ALL SELECT id FROM sessions');
    for (const { id } of ids.rows) expect(id).toMatch(/^[a-z]+_[0-9a-f]{32}$/);
  });

  it('a key records when it was last used, without a write on every request', async () => {
    // The periodic write is off here so that only the explicit one below writes.
    const api = await startTestApi(db, { KEY_REQUEST_LOG_FLUSH_MS: '0' });
    try {
      const statements = await captureStatements(db, async () => {
        for (let i = 0; i < 5; i += 1) await api.call('/api/public/v1/courses', { key: one.coursesOnlyKey });
      });
      expect(statements.filter((text) => /UPDATE api_keys/i.test(text))).toEqual([]);
      const before = (await listApiKeys(db, one.workspaceId)).find((key) => key.scopes.join() === 'courses:read')!;
      expect(before.lastUsedAt).toBeNull();
      await api.server.keyActivity.flush();
      const after = (await listApiKeys(db, one.workspaceId)).find((key) => key.scopes.join() === 'courses:read')!;
      expect(after.lastUsedAt).not.toBeNull();
      expect(Date.now() - new Date(after.lastUsedAt!).getTime()).toBeLessThan(60_000);
    } finally {
      await api.close();
    }
  });
});
