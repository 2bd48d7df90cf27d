import { createHash } from 'node:crypto';
import ICAL from 'ical.js';
import ical from 'node-ical';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { guessedFeedToken } from '../support/forged-credentials.ts';
import { createFeedToken, revokeFeedToken } from '../../src/calendar/feed-token-store.ts';
import type { components } from '../../src/contract/public-v1-types.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

interface ParsedEvent {
  uid: string;
  start: string;
  durationSeconds: number;
  summary: string;
  location: string;
  sequence: number;
  lastModified: string;
}

function parseWithIcalJs(text: string): ParsedEvent[] {
  const calendar = new ICAL.Component(ICAL.parse(text));
  return calendar.getAllSubcomponents('vevent').map((component) => {
    const event = new ICAL.Event(component);
    return {
      uid: event.uid,
      start: event.startDate.toJSDate().toISOString(),
      durationSeconds: event.duration.toSeconds(),
      summary: event.summary,
      location: event.location,
      sequence: event.sequence,
      lastModified: (component.getFirstPropertyValue('last-modified') as ICAL.Time).toJSDate().toISOString(),
    };
  });
}

function parseWithNodeIcal(text: string): ParsedEvent[] {
  return Object.values(ical.sync.parseICS(text))
    .filter((item): item is ical.VEvent => item?.type === 'VEVENT')
    .map((event) => ({
      uid: event.uid,
      start: new Date(event.start).toISOString(),
      durationSeconds: (new Date(event.end!).getTime() - new Date(event.start).getTime()) / 1000,
      summary: String(event.summary),
      location: String(event.location),
      sequence: Number(event.sequence),
      lastModified: new Date(event.lastmodified!).toISOString(),
    }));
}

const TRICKY_TITLE = 'Café crème 🎨, pottery; glazes \\ kilns\nsecond line — long enough to be folded beyond seventy-five octets ééééé';
const TRICKY_LOCATION = 'Ateliér «Ñandú», 2nd floor; ring twice\\then wait 🚪 — Straße der Pariser Kommune 12, Berlin';

describeOnEachDatabase('calendar feed on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let path: string;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    const fixture = contractFixture('Calendar', 10);
    fixture.courseTemplates[1]!.title = TRICKY_TITLE;
    fixture.courseRuns[1]!.sessions[1]!.location = TRICKY_LOCATION;
    ws = await seedWorkspace(db, fixture);
    api = await startTestApi(db, { FEED_RATE_LIMIT_MAX: '1000' });
    path = (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL, name: 'Team calendar' })).path;
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  const listedSessions = async () => {
    const courses = (await api.call('/api/public/v1/courses', { key: ws.fullKey })).body as components['schemas']['CourseList'];
    return courses.data.flatMap((course) =>
      course.sessions.map((session) => ({
        uid: session.id,
        start: session.startsAt,
        durationSeconds: session.durationMinutes * 60,
        summary: course.title,
        location: session.location,
      })),
    );
  };

  it('calendar.content: parses with ical.js and node-ical and yields exactly the sessions of /courses', async () => {
    const response = await api.call(path);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/calendar; charset=utf-8');
    const expected = await listedSessions();
    expect(expected.length).toBeGreaterThan(3);
    for (const parse of [parseWithIcalJs, parseWithNodeIcal]) {
      const events = parse(response.text).map(({ uid, start, durationSeconds, summary, location }) => ({ uid, start, durationSeconds, summary, location }));
      expect(events).toEqual(expected);
    }
  });

  it('the feed runs the /courses operation itself: only the feed reads the session revisions and change times it needs', async () => {
    const sessionColumns = (statements: string[]) => statements.find((text) => /\bFROM sessions t\b/.test(text)) ?? '';
    // A change to every session first, so that every run of both answers is built again, not
    // reused from the response cache.
    await db.query('UPDATE sessions SET location = location WHERE workspace_id = $1', [ws.workspaceId]);
    const feed = sessionColumns(await captureStatements(db, () => api.call(path)));
    const courses = sessionColumns(await captureStatements(db, () => api.call('/api/public/v1/courses', { key: ws.fullKey })));
    expect(feed).toMatch(/\bt\.revision\b/);
    expect(feed).toMatch(/\bt\.updated_at\b/);
    expect(courses).toMatch(/\bt\.starts_at\b/);
    expect(courses).not.toMatch(/\bt\.revision\b|\bt\.updated_at\b/);
  });

  it('calendar.content: keeps titles and locations with emoji, accents, commas, semicolons, backslashes and newlines intact, folded at 75 octets', async () => {
    const response = await api.call(path);
    for (const parse of [parseWithIcalJs, parseWithNodeIcal]) {
      const events = parse(response.text);
      expect(events.some((event) => event.summary === TRICKY_TITLE)).toBe(true);
      expect(events.some((event) => event.location === TRICKY_LOCATION)).toBe(true);
    }
    const raw = Buffer.from(response.text, 'utf8');
    expect(response.text.endsWith('\r\n')).toBe(true);
    expect(response.text.replaceAll('\r\n', '')).not.toMatch(/[\r\n]/);
    for (const line of response.text.split('\r\n')) {
      expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
      // A fold never splits a UTF-8 character: every line is valid UTF-8 on its own.
      expect(Buffer.from(line, 'utf8').toString('utf8')).toBe(line);
      expect(line).not.toContain('\ufffd');
    }
    expect(raw.includes(Buffer.from('\r\n '))).toBe(true);
  });

  it('calendar.content: carries UID, DTSTAMP, DTSTART in UTC, DURATION, SUMMARY, LOCATION, DESCRIPTION, X-WR-CALNAME and REFRESH-INTERVAL', async () => {
    const { text } = await api.call(path);
    expect(text).toMatch(/^BEGIN:VCALENDAR\r\nVERSION:2\.0\r\n/);
    expect(text).toContain('REFRESH-INTERVAL;VALUE=DURATION:PT1H\r\n');
    expect(text).toMatch(/X-WR-CALNAME(;VALUE=TEXT)?:Calendar\r\n/);
    const event = text.slice(text.indexOf('BEGIN:VEVENT'), text.indexOf('END:VEVENT'));
    for (const property of ['UID:', 'DTSTAMP:', 'DTSTART:', 'DURATION:', 'SUMMARY:', 'LOCATION:', 'DESCRIPTION:', 'SEQUENCE:', 'LAST-MODIFIED:']) {
      expect(event).toContain(`\r\n${property}`);
    }
    expect(event).toMatch(/\r\nDTSTART:\d{8}T\d{6}Z\r\n/);
  });

  it('calendar.personal-data: the feed contains no personal data', async () => {
    const { text } = await api.call(path);
    expect(text).not.toMatch(/@calendar\.example|Person \d|seed\.example|Olivia/);
  });

  it('calendar.headers: answers If-None-Match with the current ETag by 304, and changes ETag, SEQUENCE and LAST-MODIFIED when a session changes', async () => {
    const first = await api.call(path);
    const etag = first.headers.etag!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await api.call(path);
    expect(again.headers.etag).toBe(etag);
    const notModified = await api.call(path, { headers: [['If-None-Match', etag]] });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe('');
    expect(notModified.headers.etag).toBe(etag);
    // RFC 9110 13.1.2: a weak tag of the same value, a list that holds it, and `*` match too.
    for (const header of [`W/${etag}`, `"other", ${etag}`, '*']) {
      expect((await api.call(path, { headers: [['If-None-Match', header]] })).status, header).toBe(304);
    }
    expect((await api.call(path, { headers: [['If-None-Match', '"other"']] })).status).toBe(200);
    // A revalidation that also asks caches not to answer from storage still gets its 304.
    expect((await api.call(path, { headers: [['If-None-Match', etag], ['Cache-Control', 'no-cache']] })).status).toBe(304);

    const before = parseWithIcalJs(first.text).find((event) => event.uid === ws.ids.s1)!;
    await db.query("UPDATE sessions SET location = 'Room 9' WHERE id = $1", [ws.ids.s1]);
    const changed = await api.call(path, { headers: [['If-None-Match', etag]] });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    const after = parseWithIcalJs(changed.text).find((event) => event.uid === ws.ids.s1)!;
    expect(after.location).toBe('Room 9');
    expect(after.sequence).toBeGreaterThan(before.sequence);
    expect(after.lastModified > before.lastModified).toBe(true);
    // UIDs are stable across refreshes.
    expect(parseWithIcalJs(changed.text).map((event) => event.uid).sort()).toEqual(parseWithIcalJs(first.text).map((event) => event.uid).sort());
  });

  it('calendar.not-found: answers unknown, malformed and revoked tokens with the same 404, saying nothing about why', async () => {
    const issued = await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL });
    expect((await api.call(issued.path)).status).toBe(200);
    await revokeFeedToken(db, issued.id);
    const bodies = new Set<string>();
    for (const candidate of [issued.path, `/api/calendar/v1/${guessedFeedToken()}.ics`, '/api/calendar/v1/svc_cal_short.ics', '/api/calendar/v1/nothing', `/api/calendar/v1/${issued.token}`]) {
      const response = await api.call(candidate);
      expect(response.status, candidate).toBe(404);
      bodies.add(response.text);
    }
    expect(bodies.size).toBe(1);
    expect([...bodies][0]).toBe(JSON.stringify({ error: { code: 'not_found', message: 'No resource exists at this path.' } }));
  });

  it('calendar.token: several tokens per workspace, each stored only as a SHA-256 hash', async () => {
    const a = await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL, name: 'A' });
    const b = await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL, name: 'B' });
    expect((await api.call(a.path)).status).toBe(200);
    expect((await api.call(b.path)).status).toBe(200);
    const rows = await db.query("SELECT *, encode(token_hash, 'hex') AS hex FROM feed_tokens WHERE workspace_id = $1", [ws.workspaceId]);
    const stored = JSON.stringify(rows.rows);
    for (const token of [a.token, b.token]) {
      expect(stored).not.toContain(token);
      expect(stored).not.toContain(token.slice(8, 30));
      expect(stored).toContain(createHash('sha256').update(token).digest('hex'));
    }
  });

  it('never writes a feed token into a log line', async () => {
    const issued = await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL });
    await api.call(issued.path);
    await api.call(`/api/calendar/v1/${guessedFeedToken()}.ics`);
    const logs = api.logs.join('\n');
    expect(logs).toContain('/api/calendar/v1/[redacted].ics');
    expect(logs).not.toContain(issued.token);
    expect(logs).not.toMatch(/svc_cal_[0-9A-Za-z]{32}/);
  });

  it('accepts only GET and HEAD', async () => {
    const head = await api.call(path, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    const post = await api.call(path, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});

describeOnEachDatabase('calendar feed rate limit on %s', (target) => {
  let db: Database;
  let api: TestApi;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    api = await startTestApi(db, { FEED_RATE_LIMIT_MAX: '3', FEED_RATE_LIMIT_WINDOW_S: '60' });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('limits requests per feed token with 429 and Retry-After; another token is unaffected', async () => {
    const ws = await seedWorkspace(db, contractFixture('Feed limit', 1));
    const one = await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL });
    const two = await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL });
    for (let i = 0; i < 3; i += 1) expect((await api.call(one.path)).status).toBe(200);
    const limited = await api.call(one.path);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: { code: 'rate_limit_exceeded', message: expect.any(String) } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await api.call(two.path)).status).toBe(200);
  });
});
