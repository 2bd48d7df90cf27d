import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { PGBOUNCER, startPgBouncer, type PgBouncer } from '../support/pgbouncer.ts';
import { capturedLogs, startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { ADMIN_ARGUMENTS, ROOT } from '../support/service-commands.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { bookingOf, insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeWhere, missingFor } from '../support/variants.ts';

const run = promisify(execFile);
/** The role's timeout on the test database, and the service's bound: the same. */
const TIMEOUT_MS = 2000;

const missing = !PGBOUNCER ? 'no pgbouncer binary: apt-get install -y pgbouncer (.ci/run installs it)' : missingFor('postgres');

describeWhere(missing, 'the service behind PgBouncer in transaction mode with its default settings', () => {
  let db: Database;
  let bouncer: PgBouncer;
  let reference: TestApi;
  let receiver: WebhookReceiver;
  let server: ServerProcess;
  let workspaces: SeededWorkspace[];
  let env: Record<string, string>;
  const webhooks = webhookEnv();

  beforeAll(async () => {
    db = await openTestDatabase('postgres');
    workspaces = [];
    for (const name of ['Pool A', 'Pool B', 'Pool C']) workspaces.push(await seedWorkspace(db, contractFixture(name, 30)));
    const database = new URL(db.connectionString).pathname.slice(1);
    // The documented way through a pooler: the role sets the timeout (here only in this test's database).
    await db.query(`ALTER ROLE CURRENT_USER IN DATABASE ${database} SET statement_timeout = ${TIMEOUT_MS}`);
    bouncer = await startPgBouncer(db.connectionString);
    receiver = await startReceiver();
    await cliOn(db, webhooks).json('webhook', 'add', '--workspace', workspaces[0]!.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url);
    reference = await startTestApi(db, { RESPONSE_CACHE_MAX_BYTES: '0', RATE_LIMIT_MAX: '1000000' });
    env = {
      ...webhooks,
      DATABASE_URL: bouncer.urlFor(db.connectionString),
      DATABASE_DIRECT_URL: db.connectionString,
      DB_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS),
      RESPONSE_CACHE_MAX_BYTES: '0',
      RATE_LIMIT_MAX: '1000000',
      NODE_EXTRA_CA_CERTS: receiver.certificateFile,
    };
    server = await startServerProcess(env);
  });
  afterAll(async () => {
    if (server) capturedLogs.push(...server.output().split('\n'));
    await server?.stop();
    await reference?.close();
    await receiver?.close();
    await bouncer?.stop();
    await db?.close();
  });

  const get = async (path: string, key: string) => {
    const response = await fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
    return { status: response.status, text: await response.text() };
  };

  it('starts through it: its clients include the service and it answers the public API', async () => {
    expect(await bouncer.clientApplications()).toContain('course-booking-api');
    expect((await get('/api/public/v1/courses', workspaces[0]!.fullKey)).status).toBe(200);
    expect(server.output()).not.toMatch(/DATABASE_DIRECT_URL is not set/);
  });

  it('answers 50 concurrent requests over three workspaces, with the response cache off, with the bodies of a direct connection', async () => {
    const requests = Array.from({ length: 50 }, (_, i) => {
      const ws = workspaces[i % 3]!;
      // With and without participants:read: two variants of /bookings.
      return { path: i % 4 < 2 ? '/api/public/v1/bookings' : '/api/public/v1/courses', key: i % 2 === 0 ? ws.fullKey : ws.bookingsKey };
    });
    const expected = await Promise.all(requests.map(async ({ path, key }) => (await reference.call(path, { key })).text));
    const answers = await Promise.all(requests.map(({ path, key }) => get(path, key)));
    expect(answers.map((answer) => answer.status)).toEqual(requests.map(() => 200));
    expect(answers.map((answer) => answer.text)).toEqual(expected);
  });

  it('runs the CLI through it: admin -- key list', async () => {
    const { stdout } = await run(process.execPath, [...ADMIN_ARGUMENTS, 'key', 'list', '--workspace', workspaces[1]!.workspaceId, '--json'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, DATABASE_URL: env.DATABASE_URL, DATABASE_DIRECT_URL: env.DATABASE_DIRECT_URL },
    });
    expect(JSON.parse(stdout)).toHaveLength(4);
  });

  it('migrates a new database through DATABASE_DIRECT_URL: admin -- migrate with DATABASE_URL on PgBouncer', async () => {
    const fresh = `pgb_fresh_${Date.now()}`;
    await db.query(`CREATE DATABASE ${fresh}`);
    try {
      const at = (url: string) => Object.assign(new URL(url), { pathname: `/${fresh}` }).toString();
      const { stdout } = await run(process.execPath, [...ADMIN_ARGUMENTS, 'migrate', '--json'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, DATABASE_URL: at(env.DATABASE_URL!), DATABASE_DIRECT_URL: at(env.DATABASE_DIRECT_URL!) },
      });
      expect((JSON.parse(stdout) as { applied: string[] }).applied.length).toBeGreaterThan(5);
    } finally {
      await db.query(`DROP DATABASE IF EXISTS ${fresh} WITH (FORCE)`);
    }
  });

  it('cuts a statement that waits past DB_STATEMENT_TIMEOUT_MS on the server (the role setting) and answers 503, not a hang', async () => {
    const holder = new pg.Client({ connectionString: db.connectionString });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE bookings IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const answer = await get('/api/public/v1/bookings', workspaces[2]!.fullKey);
      const elapsed = Date.now() - started;
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.text)).toEqual({ error: { code: 'service_unavailable', message: expect.any(String) } });
      // The server's timeout, not the client's own bound (src/db/database.ts, clientBoundMs) after it.
      expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
      expect(elapsed).toBeLessThan(TIMEOUT_MS + 900);
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end();
    }
    expect((await get('/api/public/v1/bookings', workspaces[2]!.fullKey)).status).toBe(200);
  });

  it('refuses to start when the role sets a longer statement timeout than DB_STATEMENT_TIMEOUT_MS, naming the statement that fixes it', async () => {
    const start = startServerProcess({ ...env, DB_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS - 1000), WEBHOOK_WORKER: 'false' });
    await expect(start).rejects.toThrow(/exited with 1[\s\S]*pooler[\s\S]*ALTER ROLE <the service's role> SET statement_timeout = 1000[\s\S]*RECONNECT on its admin console, or a restart/);
  });

  it('delivers a booking.created from a webhook worker on DATABASE_DIRECT_URL, past PgBouncer', async () => {
    const bookingId = await insertBooking(db, workspaces[0]!.workspaceId, workspaces[0]!.ids.r1!);
    await receiver.waitFor((received) => received.some((delivery) => bookingOf(delivery).id === bookingId), 15_000);
    // LISTEN holds its connection between transactions: the wake-up listener connects to PostgreSQL itself.
    expect(await bouncer.clientApplications()).not.toContain('course-booking-webhook-wake-ups');
    const direct = await db.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'course-booking-webhook-wake-ups'",
    );
    expect(direct.rows[0]!.count).toBeGreaterThan(0);
  });
});
