import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { metricValue, postGraphQL } from '../support/internal-graphql.ts';
import { addBookings } from '../support/many-bookings.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase, describeWhere, missingFor } from '../support/variants.ts';

const counts = (n: number) =>
  `query ($id: ID!) { workspace(id: $id) { ${Array.from({ length: n }, (_, i) => `c${i}: bookingsConnection(first: 1, filter: { updatedAt: { lt: "2030-01-01T00:00:${String(i).padStart(2, '0')}Z" } }) { totalCount }`).join(' ')} } }`;

async function seeded(db: Database): Promise<{ big: SeededWorkspace; small: SeededWorkspace }> {
  const big = await seedWorkspace(db, contractFixture('Reporting', 6));
  await addBookings(db, big.workspaceId, 20_000);
  return { big, small: await seedWorkspace(db, contractFixture('Storefront', 6)) };
}

describeOnEachDatabase('internal GraphQL on its own share of connections, beside the public API, on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let big: SeededWorkspace;
  let small: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ({ big, small } = await seeded(db));
    // What bounds each request's database time is not this test's subject (internal-database-time.test.ts):
    // on the embedded engine, whose one queue the eight share with the public requests, a statement's time
    // counts its wait behind the others.
    api = await startTestApi(db, { INTERNAL_DB_POOL_SIZE: '2', INTERNAL_COST_PER_REQUEST: '200000' });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('many costly internal requests at once hold no more connections than the share (one on the embedded database), wait within it, and public requests keep their own', async () => {
    const share = target === 'embedded' ? 1 : 2;
    const internalUrl = api.server.internalUrl!;
    expect(await metricValue(internalUrl, 'internal_graphql_pool_connections', { state: 'max' })).toBe(share);
    let running = true;
    const internal = Promise.all(Array.from({ length: 8 }, () => postGraphQL(internalUrl, INTERNAL_TOKEN, { query: counts(3), variables: { id: big.workspaceId } }))).finally(() => (running = false));
    const seen = { total: 0, waiting: 0, publicWaiting: 0, publicAnswers: [] as number[], sessions: 0 };
    const internalSessions = async () =>
      (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'course-booking-api-internal'")).rows[0]!.n;
    while (running) {
      // PostgreSQL's own count of the share's connections, by the application name they carry.
      if (target === 'postgres') seen.sessions = Math.max(seen.sessions, await internalSessions());
      seen.total = Math.max(seen.total, await metricValue(internalUrl, 'internal_graphql_pool_connections', { state: 'total' }));
      seen.waiting = Math.max(seen.waiting, await metricValue(internalUrl, 'internal_graphql_pool_connections', { state: 'waiting' }));
      seen.publicAnswers.push((await api.call('/api/public/v1/bookings', { key: small.fullKey })).status);
      seen.publicWaiting = Math.max(seen.publicWaiting, await metricValue(internalUrl, 'db_pool_connections', { state: 'waiting' }));
    }
    const answers = await internal;
    // The share's connections stay open, idle, for a while after its requests: counted once more, in
    // case the requests all ran between two looks.
    if (target === 'postgres') seen.sessions = Math.max(seen.sessions, await internalSessions());
    for (const answer of answers) expect(answer.body.errors).toBeUndefined();
    expect(seen.total).toBeLessThanOrEqual(share);
    if (target === 'postgres') expect(seen.sessions).toBeGreaterThanOrEqual(1);
    expect(seen.sessions).toBeLessThanOrEqual(share);
    expect(seen.waiting).toBeGreaterThan(0);
    expect(seen.publicAnswers.length).toBeGreaterThan(0);
    expect(new Set(seen.publicAnswers)).toEqual(new Set([200]));
    expect(seen.publicWaiting).toBe(0);
  });
});

describeWhere(missingFor('postgres'), 'internal GraphQL’s own statement timeout on PostgreSQL', () => {
  let db: Database;
  let api: TestApi;
  let big: SeededWorkspace;
  let small: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase('postgres');
    ({ big, small } = await seeded(db));
    api = await startTestApi(db, { INTERNAL_STATEMENT_TIMEOUT_MS: '1' });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('a statement longer than INTERNAL_STATEMENT_TIMEOUT_MS is cancelled with QUERY_TIMEOUT, naming the timeout; the internal connections run with it and the public ones with theirs', async () => {
    const answer = await postGraphQL(api.server.internalUrl!, INTERNAL_TOKEN, { query: counts(1), variables: { id: big.workspaceId } });
    expect(answer.status).toBe(200);
    expect(answer.body.errors?.[0]).toMatchObject({ message: expect.stringContaining('statement timeout of internal GraphQL (1 ms)'), extensions: { code: 'QUERY_TIMEOUT' } });
    // The public API's statements, which take longer than 1 ms, keep DB_STATEMENT_TIMEOUT_MS.
    expect((await api.call('/api/public/v1/bookings', { key: small.fullKey })).status).toBe(200);
  });
});
