import { beforeAll, expect, it } from 'vitest';
import type { components } from '../../src/contract/public-v1-types.ts';
import type { Database } from '../../src/db/database.ts';
import { type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

type Course = components['schemas']['Course'];
type CourseList = components['schemas']['CourseList'];

describeOnEachDatabase('GET /api/public/v1/courses on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let courses: Course[];

  beforeAll(async () => {
    ({ db, api } = await sharedTestApi(target));
    ws = await seedWorkspace(db, contractFixture('Courses'));
    const response = await api.call('/api/public/v1/courses', { key: ws.coursesOnlyKey });
    expect(response.status).toBe(200);
    courses = (response.body as CourseList).data;
  });

  it('resources.course-fields: a course has exactly id, title, description and sessions; a session exactly id, startsAt, durationMinutes, timeZone, location', () => {
    for (const course of courses) {
      expect(Object.keys(course).sort()).toEqual(['description', 'id', 'sessions', 'title']);
      for (const session of course.sessions) {
        expect(Object.keys(session).sort()).toEqual(['durationMinutes', 'id', 'location', 'startsAt', 'timeZone']);
      }
    }
    const firstAid = courses.find((course) => course.id === ws.ids.r1)!;
    expect(firstAid.title).toBe('Courses First Aid');
    expect(firstAid.description).toBe('Two mornings, one afternoon.');
    const pottery = courses.find((course) => course.id === ws.ids.r2)!;
    expect(pottery.description).toBe('Clay; wheels, glaze.\nBring an apron.');
    expect(pottery.sessions[0]).toEqual({
      id: ws.ids.s4,
      startsAt: '2025-06-01T08:00:00.000Z',
      durationMinutes: 120,
      timeZone: 'America/New_York',
      location: 'Studio, 2nd floor; back door',
    });
  });

  it('resources.course-listing: drafts, unpublished runs and cancelled sessions are not in the course list', () => {
    const ids = courses.map((course) => course.id);
    expect(ids).not.toContain(ws.ids.r3);
    expect(ids).not.toContain(ws.ids.r4);
    const sessionIds = courses.flatMap((course) => course.sessions.map((session) => session.id));
    expect(sessionIds).not.toContain(ws.ids.s3);
    expect(sessionIds).not.toContain(ws.ids.s9);
  });

  it('resources.course-listing: only published runs that have scheduled sessions are listed, the whole list without pagination', () => {
    expect(courses.map((course) => course.id).sort()).toEqual([ws.ids.r1, ws.ids.r2, ws.ids.r5].sort());
    // r6 has no sessions and r7 only cancelled ones.
    expect(courses.map((course) => course.id)).not.toContain(ws.ids.r6);
    expect(courses.map((course) => course.id)).not.toContain(ws.ids.r7);
  });

  it('resources.course-order: courses are ordered by their earliest listed session start, ties by course id', () => {
    // r2 starts 2025-06-01; r1 and r5 both start 2026-12-01 09:00 (r1's cancelled earlier session does not count).
    const tied = [ws.ids.r1!, ws.ids.r5!].sort();
    expect(courses.map((course) => course.id)).toEqual([ws.ids.r2, ...tied]);
  });

  it('resources.session-order: sessions are ordered by startsAt, ties by session id', () => {
    for (const course of courses) {
      const sorted = [...course.sessions].sort((a, b) => a.startsAt.localeCompare(b.startsAt) || a.id.localeCompare(b.id));
      expect(course.sessions.map((session) => session.id)).toEqual(sorted.map((session) => session.id));
    }
    const tied = courses.find((course) => course.id === ws.ids.r5)!;
    expect(tied.sessions.map((session) => session.id)).toEqual([ws.ids.s6!, ws.ids.s6b!].sort());
    const firstAid = courses.find((course) => course.id === ws.ids.r1)!;
    expect(firstAid.sessions.map((session) => session.id)).toEqual([ws.ids.s2, ws.ids.s1]);
  });

  it('resources.sessions-listed: every scheduled session of a published run is listed, past and future', () => {
    const pottery = courses.find((course) => course.id === ws.ids.r2)!;
    expect(pottery.sessions.map((session) => session.startsAt)).toEqual(['2025-06-01T08:00:00.000Z', '2027-02-01T08:00:00.000Z']);
  });

  it('resources.timestamps: timestamps are ISO 8601 UTC with Z and milliseconds', () => {
    for (const session of courses.flatMap((course) => course.sessions)) {
      expect(session.startsAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(new Date(session.startsAt).toISOString()).toBe(session.startsAt);
    }
  });

  it('resources.ids: ids are opaque strings, never sequence numbers', () => {
    for (const id of [...courses.map((course) => course.id), ...courses.flatMap((course) => course.sessions.map((session) => session.id))]) {
      expect(typeof id).toBe('string');
      expect(id).not.toMatch(/^\d+$/);
      expect(id.length).toBeGreaterThanOrEqual(20);
    }
  });

  it('resources.no-personal-data-in-courses: courses carry no personal data', async () => {
    const response = await api.call('/api/public/v1/courses', { key: ws.fullKey });
    expect(response.text).not.toMatch(/@courses\.example|Person \d/);
  });

  it('http.cache-control: success sends Cache-Control: private, no-store and JSON with charset', async () => {
    const response = await api.call('/api/public/v1/courses', { key: ws.coursesOnlyKey });
    expect(response.headers['cache-control']).toBe('private, no-store');
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('scopes.courses: a key without courses:read gets 403 missing_scope on /courses', async () => {
    const response = await api.call('/api/public/v1/courses', { key: ws.bookingsOnlyKey });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ error: { code: 'missing_scope', message: expect.any(String) } });
    expect(response.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="courses:read"');
  });

  it('http.methods: HEAD answers like GET with the same headers and no body', async () => {
    const get = await api.call('/api/public/v1/courses', { key: ws.coursesOnlyKey });
    const head = await api.call('/api/public/v1/courses', { key: ws.coursesOnlyKey, method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    for (const name of ['content-type', 'cache-control', 'ratelimit-policy', 'x-content-type-options', 'referrer-policy', 'content-length']) {
      expect(head.headers[name], name).toBe(get.headers[name]);
    }
  });

  it('a list larger than one piece of the body arrives whole, multi-byte characters included, with its exact Content-Length', async () => {
    const base = contractFixture('Large', 0);
    const sessions = (run: number) =>
      Array.from({ length: 6 }, (_, s) => ({
        ref: `r${run}s${s}`,
        startsAt: new Date(Date.UTC(2027, 0, 1, run, s)).toISOString(),
        durationMinutes: 45,
        timeZone: 'Europe/Zurich',
        location: `Zürich, Raum ${run}·${s} — 🎓`,
        status: 'scheduled',
      }));
    const large = await seedWorkspace(db, {
      ...base,
      courseRuns: Array.from({ length: 150 }, (_, run) => ({ ref: `r${run}`, template: 't1', status: 'published', sessions: sessions(run) })),
    });
    const response = await api.call('/api/public/v1/courses', { key: large.coursesOnlyKey });
    expect(response.status).toBe(200);
    expect(response.text.length).toBeGreaterThan(128 * 1024);
    expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.text));
    const data = (response.body as CourseList).data;
    expect(response.text).toBe(JSON.stringify({ data }));
    expect(data).toHaveLength(150);
    expect(data[149]!.sessions[5]!.location).toBe('Zürich, Raum 149·5 — 🎓');
  });

  it('resources.course-listing: a course list of an empty workspace is an empty array', async () => {
    const empty = await seedWorkspace(db, { ...contractFixture('Empty', 0), courseRuns: [] });
    const response = await api.call('/api/public/v1/courses', { key: empty.coursesOnlyKey });
    expect(response.body).toEqual({ data: [] });
  });
});
