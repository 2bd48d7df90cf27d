import { request } from 'node:http';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { cliOn } from '../support/cli.ts';
import { openSharedDatabase, type SharedDatabase } from '../support/databases.ts';
import { contractFixture, OWNER_EMAIL, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { DATABASE_TARGETS, describeOnEachStore, redisUrlWithDatabase } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';

/** One GET of /courses: its status and the X-Request-Id it got. */
function get(url: string, key: string): Promise<{ status: number; requestId: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${COURSES}`, { headers: { Authorization: `Bearer ${key}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, requestId: String(res.headers['x-request-id']) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeOnEachStore(DATABASE_TARGETS, ['redis'], 'API keys across two instances on %s sharing the %s rate-limit store', (target, store) => {
  let deployment: SharedDatabase;
  let ws: SeededWorkspace;
  let one: ServerProcess;
  let two: ServerProcess;
  const cli = () => cliOn(deployment.db);
  const create = async (...options: string[]) =>
    cli().json<{ id: string; key: string }>('key', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--scopes', 'courses:read', ...options);

  beforeAll(async () => {
    deployment = await openSharedDatabase(target, 20);
    ws = await seedWorkspace(deployment.db, contractFixture(`Instances ${target}`, 1));
    // Every write of a key's last use, whichever instance makes it.
    await deployment.db.query(`CREATE TABLE last_use_writes (key_id text, used_at timestamptz);
      CREATE FUNCTION count_last_use_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO last_use_writes VALUES (NEW.id, NEW.last_used_at); RETURN NEW; END $$;
      CREATE TRIGGER last_use_writes AFTER UPDATE OF last_used_at ON api_keys FOR EACH ROW EXECUTE FUNCTION count_last_use_write();`);
    const env = {
      ...deployment.env,
      RATE_LIMIT_STORE: store,
      // Its own keyspace: its expired key's 401s, from 127.0.0.1, count against that address's failures.
      REDIS_URL: redisUrlWithDatabase(11),
      RATE_LIMIT_MAX: '100000',
      KEY_LAST_USED_INTERVAL_S: '1',
      KEY_REQUEST_LOG_FLUSH_MS: '200',
    };
    [one, two] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  });
  afterAll(async () => {
    await one?.stop();
    await two?.stop();
    await deployment?.close();
  });

  it('last use is written at most once per key and interval across both; the log holds both instances\' requests, the usage counts each once', async () => {
    const key = await create();
    const sent: string[] = [];
    const started = Date.now();
    for (let i = 0; Date.now() - started < 3500; i += 1) {
      const answer = await get(i % 2 === 0 ? one.url : two.url, key.key);
      expect(answer.status).toBe(200);
      sent.push(answer.requestId);
      await pause(15);
    }
    // Each instance writes its last use once the interval since its previous write has passed.
    await pause(1600);
    const writes = (await deployment.db.query<{ used_at: Date }>('SELECT used_at FROM last_use_writes WHERE key_id = $1 ORDER BY used_at', [key.id])).rows.map((row) => row.used_at.getTime());
    expect(writes.length).toBeGreaterThanOrEqual(2);
    expect(writes.length).toBeLessThanOrEqual(6);
    for (let i = 1; i < writes.length; i += 1) expect(writes[i]! - writes[i - 1]!).toBeGreaterThanOrEqual(1000);
    const logged = await cli().json<Array<{ requestId: string }>>('key', 'log', '--id', key.id, '--limit', '1000');
    expect(new Set(logged.map((row) => row.requestId))).toEqual(new Set(sent));
    const [day] = await cli().json<Array<{ requests: number; status2xx: number; notLogged: number }>>('key', 'usage', '--id', key.id, '--days', '1');
    expect(day).toMatchObject({ requests: sent.length, status2xx: sent.length, notLogged: 0 });
  });

  it('auth.expiry and auth.ip-allow-list: an expiry and a changed allow list reach both instances within 1 s', async () => {
    const expiring = await create('--expires-in', '1m');
    const fenced = await create();
    for (const server of [one, two]) for (const key of [expiring, fenced]) expect((await get(server.url, key.key)).status).toBe(200);
    const expiresAt = (await deployment.db.query<{ at: Date }>("UPDATE api_keys SET expires_at = now() + interval '1 second' WHERE id = $1 RETURNING expires_at AS at", [expiring.id])).rows[0]!.at.getTime();
    await cli().json('key', 'update', '--id', fenced.id, '--allow-ip', '10.0.0.0/8');
    const changedAt = Date.now();
    const statuses = async (key: string) => [(await get(one.url, key)).status, (await get(two.url, key)).status];
    await vi.waitUntil(async () => (await statuses(fenced.key)).every((status) => status === 403), { timeout: 3000, interval: 50 });
    expect(Date.now() - changedAt).toBeLessThan(1000);
    await vi.waitUntil(async () => (await statuses(expiring.key)).every((status) => status === 401), { timeout: 4000, interval: 50 });
    expect(Date.now() - expiresAt).toBeLessThan(1000);
    await cli().json('key', 'update', '--id', fenced.id, '--allow-any-ip');
    await vi.waitUntil(async () => (await statuses(fenced.key)).every((status) => status === 200), { timeout: 1000, interval: 50 });
  });

  it('a used key that expires within 7 days is named in one warning line, by one of the instances', async () => {
    const soon = await create('--expires-in', '3d');
    const started = Date.now();
    // Both instances write a last use (a second apart), and each write starts an expiry check.
    for (let i = 0; Date.now() - started < 2500; i += 1) {
      expect((await get(i % 2 === 0 ? one.url : two.url, soon.key)).status).toBe(200);
      await pause(50);
    }
    const warnings = () => [one, two].flatMap((server) => server.output().split('\n')).filter((line) => line.includes('"level":40') && line.includes(`"keyId":"${soon.id}"`));
    await vi.waitUntil(() => warnings().length > 0, { timeout: 5000, interval: 100 });
    await pause(1500);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toContain('expires within 7 days');
  });
});
