import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPublicApiClient, listBookings, listCourses } from '../../examples/typed-client/list-courses-and-bookings.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { rawRequest } from '../support/http.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';

const run = promisify(execFile);
const CLIENT = fileURLToPath(new URL('../../examples/typed-client/list-courses-and-bookings.ts', import.meta.url));
// A small limit and window, so that the 429 path is reached in a few requests and waited out in two seconds.
const LIMIT = 3;
const WINDOW_S = 2;

function runClient(env: Record<string, string>) {
  return run(process.execPath, ['--import', 'tsx', CLIENT], { env: { ...process.env, ...env }, timeout: 30_000 });
}

describe('the typed client example against a running server', () => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    ws = await seedWorkspace(db, contractFixture('Typed', 4));
    api = await startTestApi(db, { RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_S: String(WINDOW_S) });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('lists the courses and the bookings, with participants for a key that holds participants:read', async () => {
    const { stdout, stderr } = await runClient({ API_URL: api.url, API_KEY: ws.fullKey });
    expect(stderr).toBe('');
    expect(stdout).toContain('3 courses');
    expect(stdout).toContain('Typed First Aid: 2 sessions');
    expect(stdout).toContain('Typed Pottery: 2 sessions, first 2025-06-01T08:00:00.000Z (America/New_York) at Studio, 2nd floor; back door');
    expect(stdout).toContain('4 bookings');
    expect(stdout).toMatch(/2026-07-01T00:03:00\.000Z \w+ via \w+ for Person 3 of Typed/);
  });

  it('limits.per-key: on 429 it waits the seconds Retry-After gives, then retries and succeeds', async () => {
    // In-process, so that no process start-up stands between using up the limit and the client's request.
    const client = createPublicApiClient(api.url, ws.bookingsKey);
    for (let i = 0; i < LIMIT; i++) {
      await rawRequest(api.url, '/api/public/v1/courses', { headers: [['Authorization', `Bearer ${ws.bookingsKey}`]] });
    }
    const waits: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((message: string) => void waits.push(message));
    try {
      const courses = await listCourses(client);
      expect(waits).toEqual([`429 rate_limit_exceeded: waiting ${WINDOW_S} s (Retry-After) before retrying`]);
      expect(courses.map((course) => course.title)).toContain('Typed Pottery');
      const bookings = await listBookings(client);
      expect(bookings).toHaveLength(4);
      expect(bookings.some((booking) => 'participant' in booking)).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });

  it('reports an error in the contract shape and exits non-zero', async () => {
    const failure = await runClient({ API_URL: api.url, API_KEY: ws.coursesOnlyKey }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('/api/public/v1/bookings answered 403 missing_scope');
  });
});
