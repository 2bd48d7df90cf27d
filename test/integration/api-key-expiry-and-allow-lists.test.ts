import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, OWNER_EMAIL, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const COURSES = '/api/public/v1/courses';
const BOOKINGS = '/api/public/v1/bookings';
const DAY_MS = 86_400_000;

interface Issued {
  id: string;
  key: string;
  expiresAt: string | null;
  allowedIps: string[] | null;
}

/** The one unlabelled series of /metrics named `name`. */
async function gauge(internalUrl: string, name: string): Promise<number | null> {
  const text = await (await fetch(`${internalUrl}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return line === undefined ? null : Number(line.slice(name.length + 1));
}

describeOnEachDatabase('API key expiry and IP allow lists on %s', (target) => {
  let db: Database;
  let ws: SeededWorkspace;
  let api: TestApi;
  let proxied: TestApi;
  const cli = () => cliOn(db);
  const create = (...options: string[]) =>
    cli().json<Issued>('key', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--scopes', 'courses:read', ...options);
  const keyRow = async (id: string) => (await cli().json<Array<Record<string, unknown>>>('key', 'list', '--workspace', ws.workspaceId)).find((key) => key.id === id)!;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Policies', 3));
    // The key cache of production (500 ms): neither an expiry nor a changed list waits for it to end.
    api = await startTestApi(db, { KEY_CACHE_TTL_MS: '500' });
    proxied = await startTestApi(db, { TRUST_PROXY: 'loopback' });
  });
  afterAll(async () => {
    await api?.close();
    await proxied?.close();
    await db?.close();
  });

  // First: the gauge counts every workspace's keys, and the tests below make keys that expire soon.
  it('a key used in the last day that expires within 7 days is named in one warning line a day and counted by api_keys_expiring_soon', async () => {
    const soon = await create('--expires-in', '3d', '--name', 'Soon');
    const later = await create('--expires-in', '30d', '--name', 'Later');
    const unused = await create('--expires-in', '2d', '--name', 'Unused');
    for (const key of [soon, later]) expect((await api.call(COURSES, { key: key.key })).status).toBe(200);
    const warned = (id: string) => api.logs.filter((line) => line.includes('"level":40') && line.includes(`"keyId":"${id}"`));
    // The last uses are written: one of them expires within 7 days, which starts a check.
    await api.server.keyActivity.flush({ allUses: true });
    await vi.waitUntil(() => warned(soon.id).length === 1, { timeout: 5000, interval: 50 });
    expect(JSON.parse(warned(soon.id)[0]!)).toMatchObject({ msg: expect.stringMatching(/expires within 7 days/), workspaceId: ws.workspaceId, expiresAt: soon.expiresAt });
    expect(warned(soon.id)[0]).not.toContain(soon.key);
    expect(await gauge(api.server.internalUrl!, 'api_keys_expiring_soon')).toBe(1);
    // Another check (every instance makes one every 10 minutes) says nothing new the same day.
    await api.server.keyActivity.checkExpiry();
    await proxied.server.keyActivity.checkExpiry();
    expect(warned(soon.id)).toHaveLength(1);
    expect(proxied.logs.filter((line) => line.includes(soon.id))).toEqual([]);
    expect(warned(later.id)).toEqual([]);
    expect(warned(unused.id)).toEqual([]);
    expect(await gauge(proxied.server.internalUrl!, 'api_keys_expiring_soon')).toBe(1);
  });

  it('auth.ip-allow-list: from outside its list a key gets 403 ip_not_allowed, naming neither list nor key, with no RateLimit headers and nothing counted', async () => {
    const fenced = await create('--allow-ip', '10.0.0.0/8, 2001:db8::/32', '--name', 'Fenced');
    expect(fenced.allowedIps).toEqual(['10.0.0.0/8', '2001:db8::/32']);
    for (let i = 0; i < 3; i += 1) {
      const refused = await api.call(COURSES, { key: fenced.key });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ error: { code: 'ip_not_allowed', message: 'The API key may not be used from this client address.' } });
      expect(refused.text).not.toMatch(/10\.0\.0\.0|2001:db8|key_|127\.0\.0\.1/);
      expect(refused.text).not.toContain(fenced.key.slice(-4));
      for (const header of ['ratelimit', 'ratelimit-policy', 'www-authenticate', 'retry-after']) expect(refused.headers[header], header).toBeUndefined();
    }
    // The refusals took nothing of the key's budget: its first allowed request (once the instance's
    // key cache has let the old list go) leaves 119 of 120.
    expect(await cli().json('key', 'update', '--id', fenced.id, '--allow-ip', '127.0.0.1')).toEqual({ id: fenced.id, allowedIps: ['127.0.0.1/32'] });
    let inside = await api.call(COURSES, { key: fenced.key });
    while (inside.status === 403) inside = await api.call(COURSES, { key: fenced.key });
    expect([inside.status, inside.headers.ratelimit]).toEqual([200, '"default";r=119;t=60']);
    expect(await cli().json('key', 'update', '--id', fenced.id, '--allow-any-ip')).toEqual({ id: fenced.id, allowedIps: null });
    await vi.waitUntil(async () => (await proxied.call(COURSES, { key: fenced.key, headers: [['X-Forwarded-For', '198.51.100.20']] })).status === 200, { timeout: 2000 });
    // A key without a list never gets ip_not_allowed, whatever address it comes from.
    expect((await proxied.call(COURSES, { key: ws.coursesOnlyKey, headers: [['X-Forwarded-For', '198.51.100.20']] })).status).toBe(200);
  });

  it('auth.ip-allow-list: a change of the list reaches the instance within 1 s, through its key cache', async () => {
    const key = await create('--allow-ip', '127.0.0.0/8');
    expect((await api.call(COURSES, { key: key.key })).status).toBe(200);
    await cli().json('key', 'update', '--id', key.id, '--allow-ip', '192.0.2.0/24');
    const changedAt = Date.now();
    await vi.waitUntil(async () => (await api.call(COURSES, { key: key.key })).status === 403, { timeout: 3000, interval: 50 });
    expect(Date.now() - changedAt).toBeLessThan(1000);
  });

  it('auth.ip-allow-list: behind TRUST_PROXY the client is the address the trusted proxy names; IPv4, IPv4-mapped and IPv6 match their ranges; a header from an untrusted peer is not believed', async () => {
    const key = await create('--allow-ip', '203.0.113.0/24,2001:db8:5::/48');
    const from = async (app: TestApi, address: string) => (await app.call(COURSES, { key: key.key, headers: [['X-Forwarded-For', address]] })).status;
    expect(await from(proxied, '203.0.113.7')).toBe(200);
    expect(await from(proxied, '::ffff:203.0.113.9')).toBe(200);
    expect(await from(proxied, '2001:db8:5:1::7')).toBe(200);
    expect(await from(proxied, '198.51.100.1')).toBe(403);
    expect(await from(proxied, '2001:db8:6::1')).toBe(403);
    // The proxy appends the client it saw: what the client wrote in front of it is never believed.
    expect(await from(proxied, '203.0.113.7, 198.51.100.1')).toBe(403);
    // Without TRUST_PROXY the peer (127.0.0.1) is the client, whatever the header says.
    expect(await from(api, '203.0.113.7')).toBe(403);
  });

  it('http.checks-order: over HTTP the allow list answers after the method and the key, before the rate limit, the scope and the query string', async () => {
    const fenced = await create('--allow-ip', '10.0.0.0/8');
    expect((await api.call(BOOKINGS, { key: fenced.key, method: 'POST' })).status).toBe(405);
    expect((await api.call(`${BOOKINGS}?limit=5`, { key: `${fenced.key.slice(0, -1)}${fenced.key.endsWith('a') ? 'b' : 'a'}` })).status).toBe(401);
    const refused = await api.call(`${BOOKINGS}?limit=5`, { key: fenced.key });
    expect([refused.status, (refused.body as { error: { code: string } }).error.code]).toEqual([403, 'ip_not_allowed']);
    // A key whose budget is spent still gets ip_not_allowed from outside its list, not 429.
    const limited = await startTestApi(db, { RATE_LIMIT_MAX: '1' });
    try {
      const spent = await create('--allow-ip', '127.0.0.1');
      expect((await limited.call(COURSES, { key: spent.key })).status).toBe(200);
      expect((await limited.call(COURSES, { key: spent.key })).status).toBe(429);
      await cli().json('key', 'update', '--id', spent.id, '--allow-ip', '10.0.0.0/8');
      expect((await limited.call(`${BOOKINGS}?x=1`, { key: spent.key })).status).toBe(403);
    } finally {
      await limited.close();
    }
  });

  it('auth.expiry: an expired key gets exactly the answer a revoked key gets, on the instance within 1 s of its expiry', async () => {
    const expiring = await create('--expires-in', '1m', '--name', 'Expiring');
    const revoked = await create('--name', 'Revoked');
    expect(Date.parse(expiring.expiresAt!) - Date.now()).toBeGreaterThan(50_000);
    expect((await api.call(COURSES, { key: expiring.key })).status).toBe(200);
    await cli().json('key', 'revoke', '--id', revoked.id);
    // The minute is brought forward to a second from now: the key is then in the instance's key cache.
    const expiresAt = (await db.query<{ at: Date }>("UPDATE api_keys SET expires_at = now() + interval '1 second' WHERE id = $1 RETURNING expires_at AS at", [expiring.id])).rows[0]!.at.getTime();
    await vi.waitUntil(async () => (await api.call(COURSES, { key: expiring.key })).status === 401, { timeout: 5000, interval: 50 });
    expect(Date.now() - expiresAt).toBeLessThan(1000);
    const asExpired = await api.call(COURSES, { key: expiring.key });
    const asRevoked = await api.call(COURSES, { key: revoked.key });
    const shape = (response: typeof asExpired) => ({ status: response.status, text: response.text, headers: { ...response.headers, 'x-request-id': '', date: '' } });
    expect(shape(asExpired)).toEqual(shape(asRevoked));
    expect(asExpired.text).not.toMatch(/expire/i);
    expect(await keyRow(expiring.id)).toMatchObject({ state: 'expired', expiresAt: new Date(expiresAt).toISOString() });
    // An expired key may be rotated: its replacement works, with a fresh minute.
    const rotated = await cli().json<Issued>('key', 'rotate', '--id', expiring.id);
    expect((await api.call(COURSES, { key: rotated.key })).status).toBe(200);
    expect(await keyRow(expiring.id)).toMatchObject({ state: 'rotated' });
  });

  it('auth.expiry: key rotate gives the new key the same lifetime from the rotation on, and the same allow list', async () => {
    const relative = await create('--expires-in', '30d', '--allow-ip', '127.0.0.0/8,2001:db8::/32');
    const rotated = await cli().json<Issued>('key', 'rotate', '--id', relative.id);
    expect(Math.abs(Date.parse(rotated.expiresAt!) - (Date.now() + 30 * DAY_MS))).toBeLessThan(5000);
    expect(await keyRow(rotated.id)).toMatchObject({ allowedIps: ['127.0.0.0/8', '2001:db8::/32'], state: 'active' });
    const at = new Date(Date.now() + 2 * DAY_MS).toISOString();
    const absolute = await create('--expires-at', at);
    const lifetime = Date.parse(at) - Date.parse(String((await keyRow(absolute.id)).createdAt));
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const rotatedAt = Date.now();
    const again = await cli().json<Issued>('key', 'rotate', '--id', absolute.id);
    expect(Math.abs(Date.parse(again.expiresAt!) - (rotatedAt + lifetime))).toBeLessThan(1000);
    expect(Date.parse(again.expiresAt!)).toBeGreaterThan(Date.parse(at));
    const plain = await cli().json<Issued>('key', 'rotate', '--id', (await create()).id);
    expect(plain.expiresAt).toBeNull();
  });

  it('auth.ip-allow-list: an address with a zone id and the IPv4-mapped /96 (every IPv4 client) are refused by name, writing nothing; a narrower mapped range is its IPv4 range', async () => {
    const count = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys')).rows[0]!.n;
    const before = await count();
    const createWith = (...options: string[]) => ['key', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--scopes', 'courses:read', ...options];
    for (const [argv, message] of [
      [createWith('--allow-ip', 'fe80::1%eth0'), /"fe80::1%eth0" has a zone id \(%eth0\), which names a network interface, not addresses: clients are seen without one; give fe80::1$/m],
      [createWith('--allow-ip', 'fe80::%eth0/64'), /"fe80::%eth0\/64" has a zone id \(%eth0\)/],
      [createWith('--allow-ip', '::ffff:0.0.0.0/96'), /"::ffff:0\.0\.0\.0\/96" is every IPv4 address \(the IPv4-mapped range \/96 is 0\.0\.0\.0\/0\): give 0\.0\.0\.0\/0 if every IPv4 client is meant/],
    ] as const) {
      const result = await cli().run(...argv);
      expect(result.code, argv.join(' ')).toBe(1);
      expect(result.stderr, argv.join(' ')).toMatch(message);
      expect(result.stdout, argv.join(' ')).toBe('');
    }
    expect(await count()).toBe(before);
    const mapped = await create('--allow-ip', '::ffff:10.0.0.0/104, 0.0.0.0/0');
    expect(await keyRow(mapped.id)).toMatchObject({ allowedIps: ['10.0.0.0/8', '0.0.0.0/0'], state: 'active' });
  });

  it('key create, update, log and usage refuse bad input with a clear message and a non-zero exit, writing nothing', async () => {
    const count = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM api_keys')).rows[0]!.n;
    const kept = await create('--allow-ip', '127.0.0.1');
    const revoked = await create();
    await cli().json('key', 'revoke', '--id', revoked.id);
    const before = await count();
    const createWith = (...options: string[]) => ['key', 'create', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--scopes', 'courses:read', ...options];
    const tooMany = Array.from({ length: 101 }, (_, i) => `10.0.${i}.0/24`).join(',');
    for (const [argv, message] of [
      [createWith('--expires-in', '30x'), /--expires-in "30x" is not a duration: give a whole number and a unit/],
      [createWith('--expires-in', '30'), /is not a duration/],
      [createWith('--expires-in', '0m'), /--expires-in "0m" is out of range/],
      [createWith('--expires-in', '4000d'), /out of range: at least 1m, at most 3650d/],
      [createWith('--expires-at', 'tomorrow'), /--expires-at "tomorrow" is not an ISO 8601 time with a time zone/],
      [createWith('--expires-at', '2030-01-01T00:00:00'), /is not an ISO 8601 time with a time zone/],
      [createWith('--expires-at', '2030-02-30T00:00:00Z'), /is not an ISO 8601 time/],
      [createWith('--expires-at', '2020-01-01T00:00:00Z'), /is not at least a minute from now/],
      [createWith('--expires-in', '1d', '--expires-at', '2030-01-01T00:00:00Z'), /Give --expires-in or --expires-at, not both/],
      [createWith('--allow-ip', '10.1.2.3/8'), /"10\.1\.2\.3\/8" has bits set past its \/8 prefix: did you mean 10\.0\.0\.0\/8\?/],
      [createWith('--allow-ip', '10.0.0.0/8,nope,1.2.3.4/40'), /"nope" is not an IPv4 or IPv6 address or CIDR range; "1\.2\.3\.4\/40" is not/],
      [createWith('--allow-ip', '127.1'), /"127\.1" is not an IPv4 or IPv6 address/],
      [createWith('--allow-ip', ''), /--allow-ip needs at least one address or CIDR range/],
      [createWith('--allow-ip', '10.0.0.0/8,,10.1.0.0/16'), /has an empty entry/],
      [createWith('--allow-ip', tooMany), /--allow-ip has 101 entries; at most 100 are allowed/],
      [createWith('--expires-in', '1d', '--scopes', 'nothing:read'), /Unknown scope "nothing:read"/],
      [['key', 'update', '--id', 'key_missing', '--allow-ip', '10.0.0.0/8'], /No API key with id "key_missing"/],
      [['key', 'update', '--id', kept.id], /Give --allow-ip <list> or --allow-any-ip/],
      [['key', 'update', '--id', kept.id, '--allow-ip', '10.0.0.0/8', '--allow-any-ip'], /Give --allow-ip <list> or --allow-any-ip/],
      [['key', 'update', '--id', kept.id, '--allow-ip', '300.0.0.0/8'], /"300\.0\.0\.0\/8" is not an IPv4 or IPv6 address/],
      [['key', 'update', '--id', revoked.id, '--allow-ip', '10.0.0.0/8'], /is revoked or rotated/],
      [['key', 'log', '--id', 'key_missing'], /No API key with id "key_missing"/],
      [['key', 'log', '--id', kept.id, '--status', '4x'], /--status "4x" is not a status \(429\) or a class \(4xx\)/],
      [['key', 'log', '--id', kept.id, '--status', '700'], /is not a status/],
      [['key', 'log', '--id', kept.id, '--limit', '0'], /--limit "0" is not a whole number from 1 to 1000/],
      [['key', 'log', '--id', kept.id, '--limit', '5000'], /from 1 to 1000/],
      [['key', 'log', '--id', kept.id, '--since', 'yesterday'], /--since "yesterday" is not an ISO 8601 time/],
      [['key', 'usage', '--id', 'key_missing'], /No API key with id "key_missing"/],
      [['key', 'usage', '--id', kept.id, '--days', '0'], /--days "0" is not a whole number from 1 to 90/],
      [['key', 'usage', '--id', kept.id, '--days', 'week'], /--days "week" is not a whole number/],
    ] as const) {
      const result = await cli().run(...argv);
      expect(result.code, argv.join(' ')).toBe(1);
      expect(result.stderr, argv.join(' ')).toMatch(/^error: /);
      expect(result.stderr, argv.join(' ')).toMatch(message);
      expect(result.stdout, argv.join(' ')).toBe('');
    }
    expect(await count()).toBe(before);
    expect(await keyRow(kept.id)).toMatchObject({ allowedIps: ['127.0.0.1/32'], state: 'active' });
    expect(await keyRow(revoked.id)).toMatchObject({ allowedIps: null, state: 'revoked' });
  });
});
