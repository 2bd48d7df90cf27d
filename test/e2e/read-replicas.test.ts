import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createFeedToken } from '../../src/calendar/feed-token-store.ts';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { capturedLogs } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { POSTGRES_BIN, ThrowawayCluster } from '../support/throwaway-cluster.ts';
import { insertBooking } from '../support/webhooks.ts';
import { describeWhere } from '../support/variants.ts';

if (!POSTGRES_BIN) console.warn('!!! read replica test NOT RUN: no PostgreSQL server binaries under /usr/lib/postgresql !!!');

const INTERNAL_API_TOKEN = 'replica-test-internal-token-0123';

/** The lag bound of the server under test: long enough that a paused replica stays `ok` for a few requests. */
const MAX_LAG_MS = 2000;

interface Readiness {
  status: string;
  replicas?: Array<{ replica: number; state: string }>;
}

describeWhere(POSTGRES_BIN ? null : 'no PostgreSQL server binaries under /usr/lib/postgresql', 'reads on a streaming replica', () => {
  let primary: ThrowawayCluster;
  let standby: ThrowawayCluster;
  let db: Database;
  let onStandby: pg.Client;
  let server: ServerProcess;
  let ws: SeededWorkspace;
  let feedPath: string;

  beforeAll(async () => {
    primary = await ThrowawayCluster.create('pg-replicas-');
    db = await openDatabase({ url: primary.url, poolSize: 2, applicationName: 'read-replicas-test' });
    await migrate(db);
    ws = await seedWorkspace(db, contractFixture('Replicated', 10));
    feedPath = (await createFeedToken(db, { workspaceId: ws.workspaceId, memberEmail: OWNER_EMAIL })).path;
    standby = await primary.createReplica();
    onStandby = new pg.Client({ connectionString: standby.url });
    await onStandby.connect();
    server = await startServerProcess({
      DATABASE_URL: primary.url,
      DATABASE_REPLICA_URL: standby.url,
      DATABASE_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS),
      RATE_LIMIT_MAX: '1000000',
      FEED_RATE_LIMIT_MAX: '1000000',
      WEBHOOK_WORKER: 'false',
      INTERNAL_API_TOKEN,
    });
  });
  afterAll(async () => {
    if (server) capturedLogs.push(...server.output().split('\n'));
    await server?.stop();
    await onStandby?.end().catch(() => {});
    await db?.close();
    await standby?.destroy();
    await primary?.destroy();
  });

  const get = async (path: string, key = ws.fullKey) => {
    const response = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
    return { status: response.status, text: await response.text() };
  };
  const readiness = async () => {
    const response = await fetch(`${server.url}/readyz`);
    return { status: response.status, body: (await response.json()) as Readiness };
  };
  const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 8000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  /** Index and sequential scans of one table on one server: every version read is one of `data_versions`. */
  const scans = async (client: { query(text: string): Promise<{ rows: Array<{ n: string }> }> }, table: string) =>
    Number((await client.query(`SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = '${table}'`)).rows[0]!.n);
  const versionReads = (client: { query(text: string): Promise<{ rows: Array<{ n: string }> }> }) => scans(client, 'data_versions');
  const onPrimary = { query: (text: string) => db.query<{ n: string }>(text) };
  const onReplica = { query: (text: string) => onStandby.query<{ n: string }>(text) };

  it('reports the replica on /readyz, ready, once the new standby has caught up', async () => {
    // A standby made a moment ago may still be replaying the seed on a busy machine: `lagging`
    // until then, and the instance ready throughout.
    await until('the standby caught up', async () => {
      const answer = await readiness();
      expect(answer).toMatchObject({ status: 200, body: { status: 'ready' } });
      return answer.body.replicas?.[0]?.state === 'ok';
    }, 20_000);
    expect(await readiness()).toEqual({ status: 200, body: { status: 'ready', replicas: [{ replica: 1, state: 'ok' }] } });
  });

  /**
   * Ends the service's connections to one server (the public API's pool and internal GraphQL's, by
   * their application names): a backend writes its pending statistics when
   * it exits (an idle one may otherwise hold them for 10 s). The service's pools connect again.
   */
  const flushStatistics = async (client: { query(text: string): Promise<{ rows: Array<{ pid: number }> }> }) => {
    const { rows } = await client.query(
      // OFFSET 0 keeps the filter ahead of the termination.
      "SELECT pid, pg_terminate_backend(pid) FROM (SELECT pid FROM pg_stat_activity WHERE application_name IN ('course-booking-api', 'course-booking-api-internal') AND pid <> pg_backend_pid() OFFSET 0) s",
    );
    const pids = rows.map((row) => row.pid).join(',') || '0';
    await until('the ended connections gone', async () => (await client.query(`SELECT pid FROM pg_stat_activity WHERE pid IN (${pids})`)).rows.length === 0);
    await settled();
  };

  /**
   * The service has let go of ended connections: its pools drop one when they read the server's
   * termination, and a replica check or read that met one first marks the replica `down` until the
   * next check. Two answers of /readyz, a check apart, that both say `ok`.
   */
  const settled = async () => {
    const checkMs = Math.min(250, MAX_LAG_MS / 4);
    let oks = 0;
    await until('the replica taking reads again', async () => {
      oks = (await readiness()).body.replicas?.[0]?.state === 'ok' ? oks + 1 : 0;
      if (oks < 2) await new Promise((resolve) => setTimeout(resolve, checkMs));
      return oks >= 2;
    });
  };

  it('reads the data versions of /courses and /bookings on the replica, not on the primary', async () => {
    const replicaSide = { query: (text: string) => onStandby.query<{ pid: number }>(text) };
    const primarySide = { query: (text: string) => db.query<{ pid: number }>(text) };
    await flushStatistics(replicaSide);
    await flushStatistics(primarySide);
    const [standbyBefore, primaryBefore] = [await versionReads(onReplica), await versionReads(onPrimary)];
    for (let i = 0; i < 10; i += 1) {
      expect((await get('/api/public/v1/courses')).status).toBe(200);
      expect((await get('/api/public/v1/bookings')).status).toBe(200);
    }
    await flushStatistics(replicaSide);
    await flushStatistics(primarySide);
    expect((await versionReads(onReplica)) - standbyBefore).toBeGreaterThanOrEqual(20);
    expect((await versionReads(onPrimary)) - primaryBefore).toBe(0);
  });

  it('builds the calendar feed and answers internal GraphQL from the replica', async () => {
    const replicaSide = { query: (text: string) => onStandby.query<{ pid: number }>(text) };
    const primarySide = { query: (text: string) => db.query<{ pid: number }>(text) };
    await flushStatistics(replicaSide);
    await flushStatistics(primarySide);
    const [standbyBefore, primaryBefore] = [await scans(onReplica, 'sessions'), await scans(onPrimary, 'sessions')];
    const feed = await fetch(`${server.url}${feedPath}`);
    expect(feed.status).toBe(200);
    expect(await feed.text()).toContain('BEGIN:VEVENT');
    const internalUrl = /Internal GraphQL: (http:\/\/\S+)/.exec(server.output())![1]!;
    const query = 'query Runs($workspaceId: ID!) { workspace(id: $workspaceId) { courseRunsConnection(first: 10) { nodes { id sessionsConnection(first: 5) { nodes { startsAt } } } } } }';
    for (let i = 0; i < 3; i += 1) {
      const response = await fetch(internalUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${INTERNAL_API_TOKEN}` },
        body: JSON.stringify({ query, variables: { workspaceId: ws.workspaceId } }),
      });
      const body = (await response.json()) as { data?: { workspace?: { courseRunsConnection: { nodes: unknown[] } } }; errors?: unknown };
      expect(body.errors).toBeUndefined();
      expect(body.data?.workspace?.courseRunsConnection.nodes.length).toBeGreaterThan(0);
    }
    await flushStatistics(replicaSide);
    await flushStatistics(primarySide);
    expect((await scans(onReplica, 'sessions')) - standbyBefore).toBeGreaterThanOrEqual(4);
    expect((await scans(onPrimary, 'sessions')) - primaryBefore).toBe(0);
  });

  it('shows a booking written on the primary in /bookings within a second', async () => {
    const id = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    const written = Date.now();
    await until('the booking in /bookings', async () => (await get('/api/public/v1/bookings')).text.includes(id), 1000);
    expect(Date.now() - written).toBeLessThan(1000);
  });

  it('never answers with data older than an answer it already gave: a feed served from the primary while replay is paused keeps /courses on the primary too', async () => {
    await onStandby.query('SELECT pg_wal_replay_pause()');
    await db.query('UPDATE course_templates SET title = $1 WHERE id = $2', ['Renamed while replay is paused', ws.ids.t1]);
    // The feed's token statement reads the version on the primary: the standby is behind it, so
    // the primary builds the feed, with the new title.
    const feed = await fetch(`${server.url}${feedPath}`);
    expect(await feed.text()).toContain('Renamed while replay is paused');
    // The standby is still within the lag bound, but behind what was served.
    expect((await readiness()).body.replicas).toEqual([{ replica: 1, state: 'ok' }]);
    expect((await get('/api/public/v1/courses')).text).toContain('Renamed while replay is paused');
    expect((await get('/api/public/v1/courses', ws.coursesOnlyKey)).text).toContain('Renamed while replay is paused');
  });

  it('skips a replica lagging past DATABASE_REPLICA_MAX_LAG_MS for the primary, says so on /readyz (still 200), and takes it back once it catches up', async () => {
    // Replay is still paused; more writes move the primary on.
    const id = await insertBooking(db, ws.workspaceId, ws.ids.r2!);
    await until('the replica reported lagging', async () => (await readiness()).body.replicas?.[0]?.state === 'lagging');
    expect((await readiness()).status).toBe(200);
    const answer = await get('/api/public/v1/bookings');
    expect(answer.status).toBe(200);
    expect(answer.text).toContain(id);
    await onStandby.query('SELECT pg_wal_replay_resume()');
    await until('the replica back in use', async () => (await readiness()).body.replicas?.[0]?.state === 'ok');
  });

  it('skips a stopped replica: requests still get 200, and /readyz reports it down', async () => {
    await onStandby.end();
    await standby.stop();
    for (let i = 0; i < 5; i += 1) {
      expect((await get('/api/public/v1/courses')).status).toBe(200);
      expect((await get('/api/public/v1/bookings', ws.bookingsKey)).status).toBe(200);
      expect((await fetch(`${server.url}${feedPath}`)).status).toBe(200);
    }
    await until('the replica reported down', async () => (await readiness()).body.replicas?.[0]?.state === 'down');
    expect((await readiness()).status).toBe(200);
    expect((await get('/api/public/v1/bookings')).status).toBe(200);
    // The log says why.
    const skipped = server
      .output()
      .split('\n')
      .filter((line) => line.includes('replica skipped'))
      .map((line) => JSON.parse(line) as { state: string; err?: { message?: string } });
    expect(skipped.at(-1)).toMatchObject({ state: 'down', err: { message: expect.stringMatching(/ECONNREFUSED|terminat|shut/i) } });
  });
});
