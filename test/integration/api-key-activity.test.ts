import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { DailyUsage as Day, LoggedRequest as LoggedRow } from '../../src/auth/key-activity-store.ts';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { metricValue } from '../support/internal-graphql.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, OWNER_EMAIL, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const BOOKINGS = '/api/public/v1/bookings';

const today = () => new Date().toISOString().slice(0, 10);

describeOnEachDatabase('API keys: last use, request log and usage on %s', (target) => {
  let db: Database;
  let ws: SeededWorkspace;
  const apis: TestApi[] = [];
  const cli = () => cliOn(db);
  const create = async (scopes = 'courses:read') =>
    cli().json<{ id: string; key: string }>('key', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--scopes', scopes);
  const start = async (env: Record<string, string>) => {
    const api = await startTestApi(db, env);
    apis.push(api);
    return api;
  };
  const log = (id: string, ...options: string[]) => cli().json<LoggedRow[]>('key', 'log', '--id', id, ...options);
  const usage = (id: string, days = '3') => cli().json<Day[]>('key', 'usage', '--id', id, '--days', days);

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Activity', 3));
  });
  afterAll(async () => {
    for (const api of apis) await api.close();
    await db?.close();
  });

  it('key list shows when and from which network each key was last used, written at most once per key and interval', async () => {
    const api = await start({ KEY_LAST_USED_INTERVAL_S: '2', KEY_REQUEST_LOG_FLUSH_MS: '100', RATE_LIMIT_MAX: '100000' });
    const key = await create();
    // Every write of a key's last use, as the database sees it, whoever writes it.
    await db.query(`CREATE TABLE last_use_writes (key_id text, used_at timestamptz);
      CREATE FUNCTION count_last_use_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO last_use_writes VALUES (NEW.id, NEW.last_used_at); RETURN NEW; END $$;
      CREATE TRIGGER last_use_writes AFTER UPDATE OF last_used_at ON api_keys FOR EACH ROW EXECUTE FUNCTION count_last_use_write();`);
    const started = Date.now();
    let requests = 0;
    // At least 5 s of requests, and enough of them to cross the interval more than once however slow
    // a busy machine makes each one.
    while (Date.now() - started < 5000 || requests < 12) {
      expect((await api.call(COURSES, { key: key.key })).status).toBe(200);
      requests += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await api.server.keyActivity.flush({ allUses: true });
    const writes = (await db.query<{ used_at: Date }>('SELECT used_at FROM last_use_writes WHERE key_id = $1 ORDER BY used_at', [key.id])).rows.map((row) => row.used_at.getTime());
    // A write every 2 s at most over at least 5 s of requests.
    const lasted = Date.now() - started;
    expect(writes.length).toBeGreaterThanOrEqual(2);
    expect(writes.length).toBeLessThanOrEqual(Math.ceil(lasted / 2000) + 1);
    for (let i = 1; i < writes.length; i += 1) expect(writes[i]! - writes[i - 1]!).toBeGreaterThanOrEqual(2000);
    const listed = (await cli().json<Array<Record<string, unknown>>>('key', 'list', '--workspace', ws.workspaceId)).find((entry) => entry.id === key.id)!;
    expect(Date.now() - Date.parse(String(listed.lastUsedAt))).toBeLessThan(5000);
    expect(listed.lastUsedNetwork).toBe('127.0.0.0/24');
    const text = (await cli().run('key', 'list', '--workspace', ws.workspaceId)).stdout;
    expect(text).toContain(`last used ${String(listed.lastUsedAt)} from 127.0.0.0/24`);
  });

  it('key log lists the key\'s requests newest first: time, method, path, status, error code, duration, the X-Request-Id it got, network and cache; no secret', async () => {
    const api = await start({ RATE_LIMIT_MAX: '4' });
    const key = await create();
    const secret = 'svc_api_0123456789abcdef0123456789abcdef012345';
    const sent = [
      await api.call(COURSES, { key: key.key }),
      await api.call(COURSES, { key: key.key }),
      await api.call(BOOKINGS, { key: key.key }),
      await api.call(`${COURSES}?token=${secret}`, { key: key.key, method: 'HEAD' }),
      await api.call(COURSES, { key: key.key, headers: [['X-Request-Id', 'integrator-trace-7']] }),
    ];
    expect(sent.map((response) => response.status)).toEqual([200, 200, 403, 400, 429]);
    await api.server.keyActivity.flush();
    const rows = await log(key.id);
    expect(rows.map((row) => [row.method, row.path, row.status, row.errorCode, row.cache])).toEqual([
      ['GET', COURSES, 429, 'rate_limit_exceeded', null],
      ['HEAD', COURSES, 400, 'invalid_request', null],
      ['GET', BOOKINGS, 403, 'missing_scope', null],
      ['GET', COURSES, 200, null, 'hit'],
      ['GET', COURSES, 200, null, 'miss'],
    ]);
    expect(rows.map((row) => row.requestId)).toEqual(sent.map((response) => response.headers['x-request-id']).reverse());
    expect(rows[0]!.requestId).toBe('integrator-trace-7');
    for (const row of rows) {
      expect(row.clientNetwork).toBe('127.0.0.0/24');
      expect(row.durationMs).toBeGreaterThanOrEqual(0);
      expect(row.requestedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
    expect(rows.map((row) => Date.parse(row.requestedAt))).toEqual([...rows.map((row) => Date.parse(row.requestedAt))].sort((a, b) => b - a));
    // Filters: a status or a class, a time or a duration back, a limit.
    expect((await log(key.id, '--status', '4xx')).map((row) => row.status)).toEqual([429, 400, 403]);
    expect((await log(key.id, '--status', '429')).map((row) => row.status)).toEqual([429]);
    expect((await log(key.id, '--status', '2xx', '--limit', '1')).map((row) => row.cache)).toEqual(['hit']);
    expect(await log(key.id, '--since', '1h')).toHaveLength(5);
    expect(await log(key.id, '--since', rows[1]!.requestedAt)).toHaveLength(2);
    expect(await log(key.id, '--since', new Date(Date.now() + 60_000).toISOString())).toEqual([]);
    const text = (await cli().run('key', 'log', '--id', key.id, '--limit', '1')).stdout;
    expect(text).toMatch(/^\S+Z {2}GET {3}\/api\/public\/v1\/courses {2}429 {2}rate_limit_exceeded {2}[\d.]+ ms {2}integrator-trace-7 {2}127\.0\.0\.0\/24 {2}-\n$/);
    // Nothing secret was kept: not the query's key, not the key, not its hash, not the full address.
    const stored = JSON.stringify((await db.query('SELECT * FROM api_key_requests r JOIN api_keys k ON k.id = r.api_key_id WHERE k.id = $1', [key.id])).rows.map(({ key_hash: _hash, last4: _last4, ...row }) => row));
    const hash = (await db.query<{ h: string }>("SELECT encode(key_hash, 'hex') AS h FROM api_keys WHERE id = $1", [key.id])).rows[0]!.h;
    for (const material of [secret, key.key, key.key.slice(8, 40), hash, '127.0.0.1']) expect(stored).not.toContain(material);
    expect(stored).not.toMatch(/svc_api_/);
  });

  it('key usage counts every request of a day (UTC) by status class and 429s, logged or not', async () => {
    const api = await start({ RATE_LIMIT_MAX: '3', KEY_REQUEST_LOG_ROWS_PER_SECOND: '2' });
    const key = await create();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await api.call(COURSES, { key: key.key })).status);
    statuses.push((await api.call(`${COURSES}?x=1`, { key: key.key })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
    await api.server.keyActivity.flush();
    const logged = (await log(key.id)).length;
    const days = await usage(key.id);
    expect(days.map((day) => day.day)).toEqual([0, 1, 2].map((back) => new Date(Date.now() - back * 86_400_000).toISOString().slice(0, 10)));
    expect(days[0]).toEqual({ day: today(), requests: 6, status2xx: 3, status3xx: 0, status4xx: 3, status5xx: 0, rateLimited: 3, notLogged: 6 - logged });
    expect(days.slice(1).every((day) => day.requests === 0 && day.notLogged === 0)).toBe(true);
    const text = (await cli().run('key', 'usage', '--id', key.id, '--days', '1')).stdout.split('\n');
    expect(text[0]).toMatch(/^day\s+requests\s+2xx\s+3xx\s+4xx\s+5xx\s+429\s+not logged$/);
    expect(text[1]).toMatch(new RegExp(`^${today()}\\s+6\\s+3\\s+0\\s+3\\s+0\\s+3\\s+${6 - logged}$`));
  });

  it('a key\'s log keeps its newest KEY_REQUEST_LOG_MAX_ROWS rows, across writes', async () => {
    const api = await start({ KEY_REQUEST_LOG_MAX_ROWS: '3' });
    const key = await create();
    const ids: string[] = [];
    for (const batch of [4, 3, 1]) {
      for (let i = 0; i < batch; i += 1) ids.push((await api.call(COURSES, { key: key.key })).headers['x-request-id']!);
      await api.server.keyActivity.flush();
      expect((await log(key.id)).map((row) => row.requestId)).toEqual(ids.slice(-3).reverse());
    }
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_key_requests WHERE api_key_id = $1', [key.id])).rows[0]!.n).toBe(3);
    expect((await usage(key.id, '1'))[0]!.requests).toBe(8);
  });

  it('a noisy key fills only its own KEY_REQUEST_LOG_ROWS_PER_SECOND; a quiet key beside it keeps every row', async () => {
    const api = await start({ KEY_REQUEST_LOG_ROWS_PER_SECOND: '3', RATE_LIMIT_MAX: '1000' });
    const noisy = await create();
    const quiet = await create();
    const before = await metricValue(api.server.internalUrl!, 'api_key_request_log_rows_total', { outcome: 'not_logged' });
    const started = Math.floor(Date.now() / 1000);
    const quietIds: string[] = [];
    for (let i = 0; i < 40; i += 1) {
      await api.call(COURSES, { key: noisy.key });
      if (i % 20 === 0) quietIds.push((await api.call(COURSES, { key: quiet.key })).headers['x-request-id']!);
    }
    const seconds = Math.floor(Date.now() / 1000) - started + 1;
    await api.server.keyActivity.flush();
    const noisyRows = (await log(noisy.id)).length;
    expect(noisyRows).toBeGreaterThanOrEqual(3);
    expect(noisyRows).toBeLessThanOrEqual(3 * seconds);
    expect(noisyRows).toBeLessThan(40);
    expect((await log(quiet.id)).map((row) => row.requestId)).toEqual(quietIds.reverse());
    expect((await usage(noisy.id, '1'))[0]).toMatchObject({ requests: 40, notLogged: 40 - noisyRows });
    expect(await metricValue(api.server.internalUrl!, 'api_key_request_log_rows_total', { outcome: 'not_logged' })).toBe(before + 40 - noisyRows);
  });

  it('log rows older than KEY_REQUEST_LOG_RETENTION_DAYS and daily counts older than KEY_USAGE_RETENTION_DAYS are deleted', async () => {
    const api = await start({ KEY_REQUEST_LOG_RETENTION_DAYS: '0.00003', KEY_USAGE_RETENTION_DAYS: '30' });
    const key = await create();
    await db.query("INSERT INTO api_key_usage (api_key_id, day, status_2xx) VALUES ($1, (now() AT TIME ZONE 'UTC')::date - 31, 5), ($1, (now() AT TIME ZONE 'UTC')::date - 29, 7)", [key.id]);
    expect((await api.call(COURSES, { key: key.key })).status).toBe(200);
    await api.server.keyActivity.flush();
    expect(await log(key.id)).toHaveLength(1);
    await vi.waitUntil(async () => (await log(key.id)).length === 0, { timeout: 10_000, interval: 200 });
    const days = (await db.query<{ age: number }>("SELECT (now() AT TIME ZONE 'UTC')::date - day AS age FROM api_key_usage WHERE api_key_id = $1 ORDER BY day", [key.id])).rows;
    expect(days.map((day) => day.age)).toEqual([29, 0]);
    expect(api.logs.some((line) => line.includes('API key request log rows deleted after their retention time'))).toBe(true);
  });

  it('KEY_REQUEST_LOG=false keeps last use and writes no log rows or daily counts', async () => {
    const api = await start({ KEY_REQUEST_LOG: 'false' });
    const key = await create();
    expect((await api.call(COURSES, { key: key.key })).status).toBe(200);
    await api.server.keyActivity.flush({ allUses: true });
    expect(await log(key.id)).toEqual([]);
    expect((await usage(key.id, '1'))[0]!.requests).toBe(0);
    const listed = (await cli().json<Array<Record<string, unknown>>>('key', 'list', '--workspace', ws.workspaceId)).find((entry) => entry.id === key.id)!;
    expect(listed).toMatchObject({ lastUsedNetwork: '127.0.0.0/24', lastUsedAt: expect.stringMatching(/Z$/) });
  });

  it('internal GraphQL serves a key and its requests as a connection to a token allowed its workspace, to no other, and no key material', async () => {
    const other = await seedWorkspace(db, contractFixture('Elsewhere', 1));
    const api = await start({});
    const key = await create();
    await api.call(COURSES, { key: key.key });
    await api.call(BOOKINGS, { key: key.key });
    await api.server.keyActivity.flush();
    const token = async (name: string, workspace: string) => (await cli().json<{ token: string }>('internal-token', 'create', '--name', name, '--workspaces', workspace)).token;
    const mine = await token(`activity-${target}`, ws.workspaceId);
    const theirs = await token(`elsewhere-${target}`, other.workspaceId);
    const query = `query($id: ID!, $workspace: ID!) {
      apiKey(id: $id) { id name lastUsedAt expiresAt requestsConnection(first: 10, filter: { status: { gte: 400 } }) { totalCount nodes { status errorCode path requestId clientNetwork cache } } }
      workspace(id: $workspace) { apiKeysConnection(first: 100) { nodes { id } } }
    }`;
    const answer = await api.graphql(query, { id: key.id, workspace: ws.workspaceId }, mine);
    expect(answer.body.errors).toBeUndefined();
    const found = answer.body.data as { apiKey: { requestsConnection: { totalCount: number; nodes: Array<Record<string, unknown>> } }; workspace: { apiKeysConnection: { nodes: Array<{ id: string }> } } };
    expect(found.apiKey.requestsConnection).toEqual({
      totalCount: 1,
      nodes: [{ status: 403, errorCode: 'missing_scope', path: BOOKINGS, requestId: expect.any(String), clientNetwork: '127.0.0.0/24', cache: null }],
    });
    expect(found.workspace.apiKeysConnection.nodes.map((node) => node.id)).toContain(key.id);
    const refused = await api.graphql(query, { id: key.id, workspace: ws.workspaceId }, theirs);
    expect(refused.body.data).toEqual({ apiKey: null, workspace: null });
    const introspected = await api.graphql('{ k: __type(name: "ApiKey") { fields { name } } r: __type(name: "ApiKeyRequest") { fields { name } } }');
    const fields = JSON.stringify(introspected.body.data);
    for (const hidden of ['keyHash', 'last4', 'allowedIps', 'createdBy', 'expiryWarnedAt', 'slot']) expect(fields).not.toContain(`"${hidden}"`);
  });
});
