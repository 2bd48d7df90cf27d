import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeedToken } from '../../src/calendar/feed-token-store.ts';
import type { Database } from '../../src/db/database.ts';
import { serviceModel } from '../../src/model/service-model.ts';
import { cacheSources, watchedTables } from '../../src/graphql/cache-sources.ts';
import { createSchema } from '../../src/graphql/schema.ts';
import { served as get, type Served } from '../support/cached-answers.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements, KEY_ACTIVITY_STATEMENT, statementsOfRequests } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const BOOKINGS = '/api/public/v1/bookings';

/** Headers that differ between any two answers, cached or not. */
const VARYING = new Set(['date', 'x-request-id', 'ratelimit', 'connection', 'keep-alive']);
const stable = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([name]) => !VARYING.has(name)));

describeOnEachDatabase('the response cache on %s', (target) => {
  let db: Database;
  /** The production default: the cache on. */
  let api: TestApi;
  /** RESPONSE_CACHE_MAX_BYTES=0. */
  let off: TestApi;
  /** A bound smaller than some answers. */
  let small: TestApi;
  /** A client of its own: changes here are plain SQL, not the service's code. */
  let sql: pg.Client;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    [api, off, small] = [await startTestApi(db), await startTestApi(db, { RESPONSE_CACHE_MAX_BYTES: '0' }), await startTestApi(db, { RESPONSE_CACHE_MAX_BYTES: '3000' })];
    sql = new pg.Client({ connectionString: db.connectionString });
    await sql.connect();
  });
  afterAll(async () => {
    await sql?.end();
    for (const server of [api, off, small]) await server?.close();
    await db?.close();
  });

  const metrics = async (server: TestApi) =>
    (await fetch(`${server.server.internalUrl}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
  const metric = (text: string, line: string) => Number(new RegExp(`^${line.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);

  describe('for every resource an answer is built from', () => {
    let ws: SeededWorkspace;
    let feed: string;

    beforeAll(async () => {
      ws = await seedWorkspace(db, contractFixture('Exact', 8));
      feed = (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL })).path;
    });

    const bookingOf = (text: string, id: string) => (JSON.parse(text) as { data: Array<{ id: string; status: string; participant?: { name: string } }> }).data.find((booking) => booking.id === id);

    // [resource, the answer that shows it, the key, a change in plain SQL, whether an answer shows the change]
    const cases: Array<[string, () => string, () => string | undefined, () => [string, unknown[]], (text: string) => boolean]> = [
      ['Workspace', () => feed, () => undefined, () => ['UPDATE workspaces SET name = $2 WHERE id = $1', [ws.workspaceId, 'Renamed team']], (text) => /X-WR-CALNAME(;VALUE=TEXT)?:Renamed team\r\n/.test(text)],
      ['CourseTemplate', () => COURSES, () => ws.fullKey, () => ['UPDATE course_templates SET title = $2 WHERE id = $1', [ws.ids.t2, 'Pottery for beginners']], (text) => text.includes('"title":"Pottery for beginners"')],
      ['CourseRun', () => COURSES, () => ws.fullKey, () => ["UPDATE course_runs SET status = 'unpublished' WHERE id = $1", [ws.ids.r5]], (text) => !text.includes(ws.ids.r5!)],
      ['Session', () => COURSES, () => ws.fullKey, () => ["UPDATE sessions SET location = 'Garden shed' WHERE id = $1", [ws.ids.s5]], (text) => text.includes('"location":"Garden shed"')],
      ['Booking', () => BOOKINGS, () => ws.bookingsKey, () => ["UPDATE bookings SET status = 'expired' WHERE id = $1", [ws.ids.b6]], (text) => bookingOf(text, ws.ids.b6!)?.status === 'expired'],
      ['Participant', () => BOOKINGS, () => ws.fullKey, () => ['UPDATE participants SET name = $2 WHERE booking_id = $1', [ws.ids.b5, 'Renamed Person']], (text) => bookingOf(text, ws.ids.b5!)?.participant?.name === 'Renamed Person'],
    ];

    it('the cases cover every resource the cached answers read', () => {
      const model = serviceModel();
      const schema = createSchema(model);
      const tables = watchedTables(cacheSources(schema, model.registry));
      const read = model.registry.all().filter((resource) => tables.includes(resource.table)).map((resource) => resource.name);
      expect(cases.map(([resource]) => resource).sort()).toEqual(read.sort());
    });

    it.each(cases)('%s: a rolled-back change is not in the next answer (a hit); a change committed through plain SQL is (a miss)', async (_resource, path, key, change, shows) => {
      const options = { key: key() };
      await get(api, path(), options);
      const cached = await get(api, path(), options);
      expect([cached.status, cached.cache]).toEqual([200, 'hit']);
      expect(shows(cached.text)).toBe(false);

      const [text, values] = change();
      await sql.query('BEGIN');
      await sql.query(text, values);
      await sql.query('ROLLBACK');
      const afterRollback = await get(api, path(), options);
      expect([afterRollback.cache, afterRollback.text]).toEqual(['hit', cached.text]);

      await sql.query(text, values);
      const next = await get(api, path(), options);
      expect([next.status, next.cache]).toEqual([200, 'miss']);
      expect(shows(next.text)).toBe(true);
      // The same bytes the cache-off server builds from the same data.
      expect(next.text).toBe((await get(off, path(), options)).text);
    });
  });

  it('resources.participant-scope: participant variants never mix, whichever is cached first', async () => {
    for (const order of [['fullKey', 'bookingsKey'], ['bookingsKey', 'fullKey']] as const) {
      const ws = await seedWorkspace(db, contractFixture('Variants', 12));
      const answers: Record<string, Served[]> = { fullKey: [], bookingsKey: [] };
      for (let round = 0; round < 2; round += 1) for (const key of order) answers[key]!.push(await get(api, BOOKINGS, { key: ws[key] }));
      // Each variant is built once, then served from its own entry.
      expect(answers[order[0]]!.map((answer) => answer.cache)).toEqual(['miss', 'hit']);
      expect(answers[order[1]]!.map((answer) => answer.cache)).toEqual(['miss', 'hit']);
      for (const answer of answers.bookingsKey!) expect(answer.text).not.toContain('participant');
      for (const answer of answers.fullKey!) expect(answer.text).toContain('"participant":{"name":"Person 1 of Variants"');
    }
  });

  it('auth.revocation: a revoked key gets 401 invalid_api_key, not the cached body', async () => {
    const ws = await seedWorkspace(db, contractFixture('Revoked', 2));
    await get(api, COURSES, { key: ws.coursesOnlyKey });
    expect((await get(api, COURSES, { key: ws.coursesOnlyKey })).cache).toBe('hit');
    await sql.query('UPDATE api_keys SET revoked_at = now() WHERE workspace_id = $1 AND scopes = $2', [ws.workspaceId, ['courses:read']]);
    const refused = await get(api, COURSES, { key: ws.coursesOnlyKey });
    expect([refused.status, refused.cache]).toEqual([401, null]);
    expect(JSON.parse(refused.text)).toEqual({ error: { code: 'invalid_api_key', message: expect.any(String) } });
    // The workspace's answer is still cached, for keys that are still valid.
    expect((await get(api, COURSES, { key: ws.fullKey })).cache).toBe('hit');
  });

  it('http.checks-order: a cached answer changes no check: 405, 403 and 400 still come first, and every request counts against the key', async () => {
    const ws = await seedWorkspace(db, contractFixture('Checks', 2));
    expect((await get(api, BOOKINGS, { key: ws.bookingsKey })).cache).toBe('miss');
    const refusals = [
      await get(api, BOOKINGS, { key: ws.bookingsKey, method: 'POST' }),
      await get(api, BOOKINGS, { key: ws.coursesOnlyKey }),
      await get(api, `${BOOKINGS}?first=5`, { key: ws.bookingsKey }),
    ];
    expect(refusals.map((served) => [served.status, served.cache])).toEqual([[405, null], [403, null], [400, null]]);
    // The window's count goes on under hits: RateLimit says how much of it is left.
    const remaining = (served: Served) => Number(/;r=(\d+);/.exec(served.headers.ratelimit ?? '')?.[1]);
    const first = await get(api, BOOKINGS, { key: ws.bookingsKey });
    const second = await get(api, BOOKINGS, { key: ws.bookingsKey });
    expect([first.cache, second.cache]).toEqual(['hit', 'hit']);
    expect(remaining(second)).toBe(remaining(first) - 1);
  });

  it('limits.per-key: the 121st request of a key in the window gets 429 although its answer is cached', async () => {
    const ws = await seedWorkspace(db, contractFixture('Limit', 1));
    const statuses: number[] = [];
    for (let i = 0; i < 121; i += 1) statuses.push((await api.call(COURSES, { key: ws.coursesOnlyKey })).status);
    expect(statuses.slice(0, 120).every((status) => status === 200)).toBe(true);
    expect(statuses[120]).toBe(429);
  });

  it('http.cache-control: with the cache off every answer is byte-identical to the cache-on answer, miss and hit, GET and HEAD, headers included', async () => {
    const ws = await seedWorkspace(db, contractFixture('Identical', 105));
    const feed = (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL })).path;
    const requests: Array<[string, { key?: string; method?: string }]> = [
      [COURSES, { key: ws.fullKey }],
      [COURSES, { key: ws.fullKey, method: 'HEAD' }],
      [BOOKINGS, { key: ws.fullKey }],
      [BOOKINGS, { key: ws.bookingsKey }],
      [BOOKINGS, { key: ws.bookingsKey, method: 'HEAD' }],
      [feed, {}],
      [feed, { method: 'HEAD' }],
    ];
    for (const [path, options] of requests) {
      const reference = await get(off, path, options);
      expect(reference.cache).toBe('off');
      const first = await get(api, path, options);
      const again = await get(api, path, options);
      // A HEAD follows the GET of the same answer, which cached it.
      expect([first.cache, again.cache]).toEqual([options.method === 'HEAD' ? 'hit' : 'miss', 'hit']);
      for (const served of [first, again]) {
        expect(served.status).toBe(reference.status);
        expect(stable(served.headers)).toEqual(stable(reference.headers));
        expect(served.text).toBe(reference.text);
      }
      if (path !== feed) expect(again.headers['cache-control']).toBe('private, no-store');
    }
  });

  it('calendar.headers: the feed ETag comes from the data version: the same on every instance, a 304 costs one statement (the token and the version in one), a change gives a new one', async () => {
    const ws = await seedWorkspace(db, contractFixture('Feed', 1));
    const feed = (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL })).path;
    const first = await get(api, feed);
    expect((await get(off, feed)).headers.etag).toBe(first.headers.etag);
    const statements = await statementsOfRequests(db, async () => {
      const revalidated = await get(api, feed, { headers: [['If-None-Match', first.headers.etag!]] });
      expect([revalidated.status, revalidated.text]).toEqual([304, '']);
    });
    expect(statements, statements.join('\n')).toHaveLength(1);
    expect(statements[0]).toMatch(/FROM feed_tokens f/);
    await sql.query("UPDATE sessions SET location = 'Moved' WHERE id = $1", [ws.ids.s1]);
    const changed = await get(api, feed, { headers: [['If-None-Match', first.headers.etag!]] });
    expect([changed.status, changed.cache]).toEqual([200, 'miss']);
    expect(changed.headers.etag).not.toBe(first.headers.etag);
    expect(changed.text).toContain('LOCATION:Moved');
  });

  it('calendar.headers: a request that shared a concurrent request\'s token lookup reads the data version itself', async () => {
    const ws = await seedWorkspace(db, contractFixture('Shared feed', 1));
    const feed = (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL })).path;
    const etag = (await get(api, feed)).headers.etag;
    let served: Served[] = [];
    const statements = await captureStatements(db, async () => {
      served = await Promise.all(Array.from({ length: 6 }, () => get(api, feed)));
    });
    const lookups = statements.filter((text) => /FROM feed_tokens f/.test(text)).length;
    const versionReads = statements.filter((text) => /^SELECT \(SELECT sum\(v\.version\)/.test(text)).length;
    expect(lookups).toBeGreaterThan(0);
    // Only requests whose lookup was shared read the version on their own.
    expect(versionReads > 0).toBe(lookups < 6);
    expect(served.map((answer) => [answer.status, answer.headers.etag])).toEqual(Array.from({ length: 6 }, () => [200, etag]));
  });

  it('a hit sends one statement besides the key lookup: the data version read; a miss reads the version once, before building', async () => {
    const ws = await seedWorkspace(db, contractFixture('Statements', 20));
    const ofRequest = async (work: () => Promise<unknown>) =>
      (await captureStatements(db, work)).filter((text) => !/FROM api_keys k JOIN workspaces w/.test(text) && !KEY_ACTIVITY_STATEMENT.test(text));
    for (const [path, key] of [[COURSES, ws.fullKey], [BOOKINGS, ws.fullKey], [BOOKINGS, ws.bookingsKey]] as const) {
      const miss = await ofRequest(() => get(api, path, { key }));
      expect(miss[0]).toMatch(/FROM data_versions/);
      expect(miss.filter((text) => /FROM data_versions/.test(text))).toHaveLength(1);
      expect(miss.length).toBeGreaterThan(1);
      const hit = await ofRequest(() => get(api, path, { key }));
      expect(hit).toHaveLength(1);
      expect(hit[0]).toMatch(/^SELECT \(SELECT sum\(v\.version\) .* FROM data_versions v WHERE v\.workspace_id = \$1\)$/);
    }
  });

  it('concurrent requests after a change share one build', async () => {
    const ws = await seedWorkspace(db, contractFixture('Concurrent', 30));
    await get(api, BOOKINGS, { key: ws.bookingsKey });
    await sql.query("UPDATE bookings SET status = 'confirmed' WHERE id = $1", [ws.ids.b29]);
    let served: Served[] = [];
    const statements = await captureStatements(db, async () => {
      served = await Promise.all(Array.from({ length: 8 }, () => get(api, BOOKINGS, { key: ws.bookingsKey })));
    });
    expect(statements.filter((text) => /FROM bookings t/.test(text))).toHaveLength(1);
    // One built it; the others waited for that build (shared) or came once it was stored (hit).
    expect(served.filter((answer) => answer.cache === 'miss')).toHaveLength(1);
    expect(served.every((answer) => ['miss', 'shared', 'hit'].includes(String(answer.cache)))).toBe(true);
    expect(served.some((answer) => answer.cache === 'shared')).toBe(true);
    expect(new Set(served.map((answer) => answer.text)).size).toBe(1);
  });

  it('the byte bound holds: an answer bigger than the bound is served whole and uncached every time; smaller ones are cached and evicted to stay within it', async () => {
    const big = await seedWorkspace(db, contractFixture('Big', 105));
    const reference = await get(off, BOOKINGS, { key: big.fullKey });
    expect(Buffer.byteLength(reference.text)).toBeGreaterThan(3000);
    for (let i = 0; i < 2; i += 1) {
      const served = await get(small, BOOKINGS, { key: big.fullKey });
      expect([served.status, served.cache, served.text]).toEqual([200, 'bypass', reference.text]);
      expect(served.headers['content-length']).toBe(String(Buffer.byteLength(reference.text)));
    }
    for (let i = 0; i < 5; i += 1) {
      const ws = await seedWorkspace(db, contractFixture(`Small ${i}`, 1));
      const answers = [await get(small, COURSES, { key: ws.fullKey }), await get(small, COURSES, { key: ws.fullKey })];
      expect(Buffer.byteLength(answers[0]!.text)).toBeGreaterThan(1000);
      expect(answers.map((answer) => answer.cache)).toEqual(['miss', 'hit']);
      expect(metric(await metrics(small), 'response_cache_bytes')).toBeLessThanOrEqual(3000);
    }
    const text = await metrics(small);
    expect(metric(text, 'response_cache_evictions_total')).toBeGreaterThan(0);
    expect(metric(text, 'response_cache_max_bytes')).toBe(3000);
    expect(metric(text, 'response_cache_answers_total{answer="bookings",outcome="bypass"}')).toBe(2);
  });

  it('hits, misses, evictions and cached bytes are on /metrics, and each request log line says how the cache answered', async () => {
    const ws = await seedWorkspace(db, contractFixture('Metrics', 1));
    const before = await metrics(api);
    await get(api, COURSES, { key: ws.fullKey });
    await get(api, COURSES, { key: ws.fullKey });
    const after = await metrics(api);
    const delta = (line: string) => metric(after, line) - (Number.isNaN(metric(before, line)) ? 0 : metric(before, line));
    expect(delta('response_cache_answers_total{answer="courses",outcome="miss"}')).toBe(1);
    expect(delta('response_cache_answers_total{answer="courses",outcome="hit"}')).toBe(1);
    expect(metric(after, 'response_cache_bytes')).toBeGreaterThan(0);
    expect(metric(after, 'response_cache_entries')).toBeGreaterThan(0);
    expect(after).toMatch(/^response_cache_evictions_total 0$/m);
    const logged = new Set(api.logs.filter((line) => line.includes('"msg":"request"')).map((line) => (JSON.parse(line) as { cache: unknown }).cache));
    for (const value of ['hit', 'miss', null]) expect(logged).toContain(value);
    for (const value of logged) expect(['hit', 'miss', 'shared', 'bypass', null]).toContain(value);
    expect(off.logs.filter((line) => line.includes('"route":"/api/public/v1/courses"')).every((line) => line.includes('"cache":"off"'))).toBe(true);
  });
});
