import { afterAll, beforeAll, expect, it } from 'vitest';
import { sha256 } from '../../src/auth/secret-format.ts';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { postGraphQL } from '../support/internal-graphql.ts';
import { startTestApi, type GraphQLResponse, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const ADMIN = 'admin@seed.example';
const PLAIN = 'member@seed.example';
const RATE_LIMIT = 12;

const AREA = /* GraphQL */ `
  query Keys($w: ID!, $m: String!) { integrations(workspaceId: $w, member: $m) { apiKeys { id name state } webhookEndpoints { id } calendarFeeds { id } } }
  query Audit($w: ID!, $m: String!, $since: String) { integrations(workspaceId: $w, member: $m) { audit(since: $since) { operation targetId source } } }
  mutation CreateKey($w: ID!, $m: String!) { createApiKey(workspaceId: $w, member: $m, input: { name: "from the page", scopes: ["courses:read"] }) { id key } }
  mutation UpdateKey($w: ID!, $m: String!, $id: ID!) { updateApiKey(workspaceId: $w, member: $m, id: $id, input: { name: "renamed on the page" }) { id name } }
  mutation RevokeKey($w: ID!, $m: String!, $id: ID!) { revokeApiKey(workspaceId: $w, member: $m, id: $id) { id state } }
  mutation AddEndpoint($w: ID!, $m: String!, $url: String!) { addWebhookEndpoint(workspaceId: $w, member: $m, input: { url: $url, events: ["booking.created"] }) { id secret } }
  mutation TestEndpoint($w: ID!, $m: String!, $id: ID!) { sendWebhookTestEvent(workspaceId: $w, member: $m, id: $id) { ok httpStatus answerStart } }
  mutation RemoveEndpoint($w: ID!, $m: String!, $id: ID!) { removeWebhookEndpoint(workspaceId: $w, member: $m, id: $id) { id state } }
  mutation CreateFeed($w: ID!, $m: String!) { createCalendarFeed(workspaceId: $w, member: $m, name: "Team") { id token } }
  mutation RevokeFeed($w: ID!, $m: String!, $id: ID!) { revokeCalendarFeed(workspaceId: $w, member: $m, id: $id) { id state } }
  mutation NewLink($w: ID!, $m: String!) { createPortalSession(workspaceId: $w, member: $m) { url expiresAt } }
`;

interface Opened {
  session: string;
  expiresAt: string;
  readOnly: boolean;
  workspace: { id: string; name: string };
  member: { email: string; role: string };
}

describeOnEachDatabase('the integrations page sessions on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let a: SeededWorkspace;
  let b: SeededWorkspace;
  let receiver: WebhookReceiver;
  let token: string;
  // On PostgreSQL the per-session limit is counted in the shared store, as on several instances.
  const env = webhookEnv({ PORTAL_RATE_LIMIT_MAX: String(RATE_LIMIT), RATE_LIMIT_STORE: target === 'postgres' ? 'postgres' : 'memory' });
  const cli = () => cliOn(db, env, receiver);
  const secretOf = (url: string) => new URL(url).hash.slice(1);

  const link = async (member = OWNER_EMAIL, ...options: string[]) =>
    (await cli().json<{ url: string; expiresAt: string }>('portal', 'link', '--workspace', a.workspaceId, '--member', member, ...options)).url;
  const open = (secret: string, headers: Record<string, string> = {}) => fetch(`${api.url}/integrations/api/session`, { method: 'POST', headers: { 'Portal-Link': secret, ...headers } });
  const session = async (member = OWNER_EMAIL, ...options: string[]) => {
    const answer = await open(secretOf(await link(member, ...options)));
    expect(answer.status).toBe(201);
    return (await answer.json()) as Opened;
  };
  const page = async (sessionToken: string, operationName: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const answer = await fetch(`${api.url}/integrations/api/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sessionToken}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: AREA, operationName, variables: { w: a.workspaceId, m: OWNER_EMAIL, ...variables } }),
    });
    return { status: answer.status, headers: answer.headers, body: (await answer.json()) as GraphQLResponse & { errors?: Array<{ extensions?: { code?: string; field?: string } }> } };
  };
  const codes = (body: GraphQLResponse) => (body.errors ?? []).map((error) => error.extensions?.code);
  const data = <T>(answer: { body: GraphQLResponse }, operation: string): T => {
    expect(answer.body.errors, operation).toBeUndefined();
    return answer.body.data![Object.keys(answer.body.data!)[0]!] as T;
  };

  beforeAll(async () => {
    db = await openTestDatabase(target);
    a = await seedWorkspace(db, contractFixture('Portal', 2));
    b = await seedWorkspace(db, contractFixture('Elsewhere', 2));
    await cli().json('member', 'add', '--workspace', a.workspaceId, '--email', ADMIN, '--name', 'Ada Admin', '--role', 'admin');
    receiver = await startReceiver(() => ({ status: 200, body: 'thanks' }));
    api = await startTestApi(db, env, { trustedCertificates: [receiver.certificate] });
    token = (await cli().json<{ token: string }>('internal-token', 'create', '--name', 'dashboard', '--integrations')).token;
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await db?.close();
  });

  it('a link opens once into a session of the workspace and member; a second opening, an expired or an unknown link get one 401 portal_link_invalid', async () => {
    const url = await link(OWNER_EMAIL, '--ttl', '2h');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:3000\/integrations\/#svc_pl_[0-9A-Za-z]{38}$/);
    const first = await open(secretOf(url));
    expect(first.status).toBe(201);
    expect(first.headers.get('set-cookie')).toBeNull();
    expect(first.headers.get('cache-control')).toBe('no-store');
    const opened = (await first.json()) as Opened;
    expect(opened).toEqual({ session: expect.stringMatching(/^svc_ps_[0-9A-Za-z]{38}$/), expiresAt: expect.stringMatching(/Z$/), readOnly: false, workspace: { id: a.workspaceId, name: expect.any(String) }, member: { email: OWNER_EMAIL, role: 'owner' } });
    const lasts = Date.parse(opened.expiresAt) - Date.now();
    expect(lasts).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(lasts).toBeLessThanOrEqual(2 * 3_600_000);
    const invalid = { error: { code: 'portal_link_invalid', message: 'This link was already opened, has expired or was revoked. Ask for a new one.' } };
    const again = await open(secretOf(url));
    expect([again.status, await again.json()]).toEqual([401, invalid]);

    const late = secretOf(await link());
    await db.query(`UPDATE portal_sessions SET link_expires_at = now() - interval '1 second' WHERE link_hash = $1`, [sha256(late)]);
    const expired = await open(late);
    expect([expired.status, await expired.json()]).toEqual([401, invalid]);
    for (const unknown of ['svc_pl_nothing', late.slice(0, -1) + (late.endsWith('a') ? 'b' : 'a'), '']) {
      const refused = await open(unknown);
      expect([refused.status, await refused.json()]).toEqual([401, invalid]);
    }
    // The session works; only the hashes are stored.
    expect(data<{ apiKeys: unknown[] }>(await page(opened.session, 'Keys'), 'Keys').apiKeys.length).toBeGreaterThan(0);
    const stored = await db.query<{ text: string }>('SELECT row_to_json(p)::text AS text FROM portal_sessions p');
    expect(stored.rows.map((row) => row.text).join('\n')).not.toMatch(/svc_p[ls]_/);
  });

  it('a link is made for an owner or admin only, with a ttl of at most 24h; createPortalSession makes one on internal GraphQL with the grant, answering the public URL', async () => {
    const refused = await cli().run('portal', 'link', '--workspace', a.workspaceId, '--member', PLAIN);
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/^error: Member member@seed.example has role member; only an owner or admin may do this/)]);
    const long = await cli().run('portal', 'link', '--workspace', a.workspaceId, '--member', OWNER_EMAIL, '--ttl', '25h');
    expect([long.code, long.stderr]).toEqual([1, expect.stringMatching(/^error: --ttl "25h" is longer than 24h, the longest a session lasts/)]);

    const made = await postGraphQL(api.server.internalUrl!, token, { query: AREA, operationName: 'NewLink', variables: { w: a.workspaceId, m: ADMIN } });
    const created = (made.body.data as { createPortalSession: { url: string; expiresAt: string } }).createPortalSession;
    expect(created.url.startsWith(`${api.url}/integrations/#svc_pl_`)).toBe(true);
    const opensFor = Date.parse(created.expiresAt) - Date.now();
    expect(opensFor).toBeGreaterThan(9 * 60_000);
    expect(opensFor).toBeLessThanOrEqual(10 * 60_000);
    const opened = (await (await open(secretOf(created.url))).json()) as Opened;
    expect(opened.member).toEqual({ email: ADMIN, role: 'admin' });
    const badTtl = await postGraphQL(api.server.internalUrl!, token, { query: 'mutation { createPortalSession(workspaceId: "' + a.workspaceId + '", member: "' + ADMIN + '", ttl: "2d") { url } }' });
    expect(badTtl.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT', field: 'ttl' } })]);
    const forbidden = await postGraphQL(api.server.internalUrl!, token, { query: AREA, operationName: 'NewLink', variables: { w: a.workspaceId, m: PLAIN } });
    expect(codes(forbidden.body as GraphQLResponse)).toEqual(['FORBIDDEN']);
    // A session makes no new link.
    const fromPage = await page(opened.session, 'NewLink', { m: ADMIN });
    expect([fromPage.status, codes(fromPage.body)]).toEqual([403, ['FORBIDDEN']]);
  });

  it('each operation family runs from the page, recorded with source page; the session acts only in its workspace and as its member, on the integrations area alone', async () => {
    const since = new Date().toISOString();
    const { session: s } = await session();
    const key = data<{ id: string; key: string }>(await page(s, 'CreateKey'), 'CreateKey');
    expect((await api.call('/api/public/v1/courses', { key: key.key })).status).toBe(200);
    expect(data(await page(s, 'UpdateKey', { id: key.id }), 'UpdateKey')).toEqual({ id: key.id, name: 'renamed on the page' });
    const endpoint = data<{ id: string; secret: string }>(await page(s, 'AddEndpoint', { url: receiver.url }), 'AddEndpoint');
    receiver.checkWith([endpoint.secret]);
    expect(data(await page(s, 'TestEndpoint', { id: endpoint.id }), 'TestEndpoint')).toEqual({ ok: true, httpStatus: 200, answerStart: 'thanks' });
    expect(data(await page(s, 'RemoveEndpoint', { id: endpoint.id }), 'RemoveEndpoint')).toEqual({ id: endpoint.id, state: 'removed' });
    const feed = data<{ id: string }>(await page(s, 'CreateFeed'), 'CreateFeed');
    expect(data(await page(s, 'RevokeFeed', { id: feed.id }), 'RevokeFeed')).toEqual({ id: feed.id, state: 'revoked' });
    expect(data(await page(s, 'RevokeKey', { id: key.id }), 'RevokeKey')).toEqual({ id: key.id, state: 'revoked' });
    expect((await api.call('/api/public/v1/courses', { key: key.key })).status).toBe(401);
    const entries = await cli().json<Array<{ operation: string; targetId: string; source: string; memberEmail: string }>>('audit', 'list', '--workspace', a.workspaceId, '--since', since);
    expect(entries.map((entry) => [entry.operation, entry.targetId, entry.source, entry.memberEmail])).toEqual([
      ['portal.link', expect.stringMatching(/^pss_/), 'cli', OWNER_EMAIL],
      ['portal.open', expect.stringMatching(/^pss_/), 'page', OWNER_EMAIL],
      ['key.create', key.id, 'page', OWNER_EMAIL],
      ['key.update', key.id, 'page', OWNER_EMAIL],
      ['webhook.add', endpoint.id, 'page', OWNER_EMAIL],
      ['webhook.test', endpoint.id, 'page', OWNER_EMAIL],
      ['webhook.remove', endpoint.id, 'page', OWNER_EMAIL],
      ['feed.create', feed.id, 'page', OWNER_EMAIL],
      ['feed.revoke', feed.id, 'page', OWNER_EMAIL],
      ['key.revoke', key.id, 'page', OWNER_EMAIL],
    ]);

    // Another workspace, another member of the same workspace: refused, nothing runs (a new session: this one is near its rate limit).
    const { session: t } = await session();
    const elsewhere = await page(t, 'CreateFeed', { w: b.workspaceId });
    expect(codes(elsewhere.body)).toEqual(['FORBIDDEN']);
    const asAdmin = await page(t, 'CreateFeed', { m: ADMIN });
    expect(codes(asAdmin.body)).toEqual(['FORBIDDEN']);
    expect((await page(t, 'Audit', { since })).body.data).toMatchObject({ integrations: { audit: expect.any(Array) } });
    expect(((await page(t, 'Audit', { since })).body.data as { integrations: { audit: unknown[] } }).integrations.audit).toHaveLength(entries.length + 2);
    // Any other field of internal GraphQL, and introspection, are not served here.
    for (const query of [`{ workspace(id: "${a.workspaceId}") { id } }`, '{ __schema { types { name } } }', `{ a: integrations(workspaceId: "${a.workspaceId}", member: "${OWNER_EMAIL}") { apiKeys { id } } b: integrations(workspaceId: "${a.workspaceId}", member: "${OWNER_EMAIL}") { apiKeys { id } } }`]) {
      const answer = await fetch(`${api.url}/integrations/api/graphql`, { method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
      expect([answer.status, codes((await answer.json()) as GraphQLResponse)], query).toEqual([403, ['FORBIDDEN']]);
    }
    // Bad input is the operation's own message, with its field.
    const bad = await fetch(`${api.url}/integrations/api/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: `mutation { createApiKey(workspaceId: "${a.workspaceId}", member: "${OWNER_EMAIL}", input: { scopes: ["courses:write"] }) { id } }` }),
    });
    expect(((await bad.json()) as { errors: Array<{ extensions: unknown }> }).errors.map((error) => error.extensions)).toEqual([{ code: 'BAD_USER_INPUT', field: 'scopes' }]);
  });

  it('a read-only session reads everything and every mutation is refused by the server with READ_ONLY_SESSION, nothing written', async () => {
    const opened = await session(OWNER_EMAIL, '--read-only');
    expect(opened.readOnly).toBe(true);
    expect(data<{ apiKeys: unknown[] }>(await page(opened.session, 'Keys'), 'Keys').apiKeys.length).toBeGreaterThan(0);
    const count = async () => (await db.query<{ n: number }>('SELECT (SELECT count(*) FROM api_keys) + (SELECT count(*) FROM feed_tokens) AS n')).rows[0]!.n;
    const before = await count();
    const [key] = data<{ apiKeys: Array<{ id: string }> }>(await page(opened.session, 'Keys'), 'Keys').apiKeys;
    for (const [operation, variables] of [
      ['CreateKey', {}],
      ['UpdateKey', { id: key!.id }],
      ['RevokeKey', { id: key!.id }],
      ['AddEndpoint', { url: receiver.url }],
      ['TestEndpoint', { id: 'whe_missing' }],
      ['RemoveEndpoint', { id: 'whe_missing' }],
      ['CreateFeed', {}],
      ['RevokeFeed', { id: 'cal_missing' }],
    ] as const) {
      const refused = await page(opened.session, operation, variables);
      expect([refused.status, codes(refused.body)], operation).toEqual([403, ['READ_ONLY_SESSION']]);
    }
    expect(await count()).toBe(before);
  });

  it('a session ends at once: revoked with portal revoke, expired, or when its member loses the role or leaves; then 401 SESSION_EXPIRED', async () => {
    const expectEnded = async (sessionToken: string) => {
      const ended = await page(sessionToken, 'Keys');
      expect([ended.status, codes(ended.body)]).toEqual([401, ['SESSION_EXPIRED']]);
    };
    const [first, second] = [await session(), await session(ADMIN)];
    const unopened = secretOf(await link());
    const revoked = await cli().json<{ revoked: number }>('portal', 'revoke', '--workspace', a.workspaceId);
    expect(revoked.revoked).toBeGreaterThanOrEqual(3);
    await expectEnded(first.session);
    await expectEnded(second.session);
    expect((await open(unopened)).status).toBe(401);

    const lapsing = await session();
    await db.query(`UPDATE portal_sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [sha256(lapsing.session)]);
    await expectEnded(lapsing.session);

    const demoted = await session(ADMIN);
    expect((await page(demoted.session, 'Keys', { m: ADMIN })).status).toBe(200);
    await db.query(`UPDATE members SET role = 'member' WHERE workspace_id = $1 AND email = $2`, [a.workspaceId, ADMIN]);
    await expectEnded(demoted.session);
    await db.query(`UPDATE members SET role = 'admin' WHERE workspace_id = $1 AND email = $2`, [a.workspaceId, ADMIN]);
    const leaving = await session(ADMIN);
    await db.query(`DELETE FROM members WHERE workspace_id = $1 AND email = $2`, [a.workspaceId, ADMIN]);
    await expectEnded(leaving.session);
    await cli().json('member', 'add', '--workspace', a.workspaceId, '--email', ADMIN, '--name', 'Ada Admin', '--role', 'admin');
    await expectEnded('svc_ps_not-a-session');
  });

  it('a request from another origin is refused with 403, the own origin accepted; past the per-session limit, 429 with Retry-After; no cookie either way', async () => {
    const { session: s } = await session();
    const foreign = await page(s, 'Keys', {}, { origin: 'https://evil.example' });
    expect([foreign.status, codes(foreign.body)]).toEqual([403, ['FOREIGN_ORIGIN']]);
    const foreignOpen = await open(secretOf(await link()), { origin: 'https://evil.example' });
    expect(foreignOpen.status).toBe(403);
    const own = await page(s, 'Keys', {}, { origin: new URL(api.url).origin });
    expect(own.status).toBe(200);
    expect(own.headers.get('set-cookie')).toBeNull();
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMIT; i += 1) statuses.push((await page(s, 'Keys')).status);
    expect(statuses.filter((status) => status === 429)).toHaveLength(1);
    const limited = await page(s, 'Keys');
    expect([limited.status, codes(limited.body)]).toEqual([429, ['rate_limit_exceeded']]);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another session has its own count.
    expect((await page((await session()).session, 'Keys')).status).toBe(200);
  });

  it("a malformed request gets a clear 4xx in GraphQL's shape, never an internal error: another method, another media type, bad JSON, an oversized body, no query", async () => {
    const { session: s } = await session();
    const send = async (init: RequestInit) => {
      const answer = await fetch(`${api.url}/integrations/api/graphql`, { method: 'POST', ...init, headers: { authorization: `Bearer ${s}`, ...(init.headers as Record<string, string>) } });
      return [answer.status, codes((await answer.json()) as GraphQLResponse)];
    };
    expect(await send({ method: 'GET' })).toEqual([405, ['method_not_allowed']]);
    expect(await send({ headers: { 'content-type': 'text/plain' }, body: '{}' })).toEqual([400, ['invalid_request']]);
    expect(await send({ headers: { 'content-type': 'application/json' }, body: '{"query":' })).toEqual([400, ['invalid_request']]);
    expect(await send({ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: `{ integrations(workspaceId: "x", member: "${'y'.repeat(200_000)}") { apiKeys { id } } }` }) })).toEqual([413, ['payload_too_large']]);
    expect(await send({ headers: { 'content-type': 'application/json' }, body: '[]' })).toEqual([400, ['invalid_request']]);
    expect(await send({ headers: { 'content-type': 'application/json' }, body: '{"query":"{ integrations( }"}' })).toEqual([400, ['GRAPHQL_PARSE_FAILED']]);
    expect(await send({ headers: { 'content-type': 'application/json' }, body: '{"query":"{ nothing }"}' })).toEqual([400, ['GRAPHQL_VALIDATION_FAILED']]);
    // Honest requests still pass on the same session.
    expect((await page(s, 'Keys')).status).toBe(200);
  });

  it('no link secret, session token or key reaches a log line', async () => {
    const url = await link();
    const opened = (await (await open(secretOf(url))).json()) as Opened;
    await page(opened.session, 'CreateKey');
    await open(secretOf(url));
    const text = api.logs.join('\n');
    expect(text).not.toContain(secretOf(url));
    expect(text).not.toContain(opened.session);
    expect(text).not.toMatch(/svc_p[ls]_[0-9A-Za-z]{8}/);
    expect(api.logs.some((line) => line.includes('"route":"/integrations/api/graphql"'))).toBe(true);
  });
});
