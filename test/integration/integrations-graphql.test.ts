import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { metricValue, postGraphQL } from '../support/internal-graphql.ts';
import { startTestApi, type GraphQLResponse, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const ADMIN = 'admin@seed.example';
const PLAIN = 'member@seed.example';
const ELSEWHERE = 'owner@elsewhere.example';
const COURSES = '/api/public/v1/courses';

const CREATE_KEY = /* GraphQL */ `
  mutation CreateKey($workspaceId: ID!, $member: String!, $input: CreateApiKeyInput!) {
    createApiKey(workspaceId: $workspaceId, member: $member, input: $input) { id key scopes expiresAt allowedIps }
  }
`;
const UPDATE_KEY = /* GraphQL */ `
  mutation UpdateKey($workspaceId: ID!, $member: String!, $id: ID!, $input: UpdateApiKeyInput!) {
    updateApiKey(workspaceId: $workspaceId, member: $member, id: $id, input: $input) { id name scopes expiresAt allowedIps }
  }
`;
const REVOKE_KEY = /* GraphQL */ `
  mutation RevokeKey($workspaceId: ID!, $member: String!, $id: ID!) { revokeApiKey(workspaceId: $workspaceId, member: $member, id: $id) { id state } }
`;
const KEYS = /* GraphQL */ `
  query Keys($workspaceId: ID!, $member: String!) { integrations(workspaceId: $workspaceId, member: $member) { apiKeys { id name state allowedIps } } }
`;

const DOCS = readFileSync(new URL('../../docs/internal-graphql.md', import.meta.url), 'utf8');

interface Issued {
  id: string;
  key: string;
}

describeOnEachDatabase('integrations on internal GraphQL on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let a: SeededWorkspace;
  let b: SeededWorkspace;
  const tokens = { granted: '', ungranted: '', onlyB: '', trusted: '' };

  const cli = () => cliOn(db);
  const post = (token: string, query: string, variables: Record<string, unknown>) => postGraphQL(api.server.internalUrl!, token, { query, variables });
  const codes = (body: GraphQLResponse) => (body.errors ?? []).map((error) => error.extensions?.code);
  const count = async (table: string) => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
  const createKey = (token: string, member: string, input: Record<string, unknown> = { scopes: ['courses:read'] }, workspaceId = a.workspaceId) =>
    post(token, CREATE_KEY, { workspaceId, member, input });

  beforeAll(async () => {
    db = await openTestDatabase(target);
    a = await seedWorkspace(db, contractFixture('Alpha', 3));
    b = await seedWorkspace(db, contractFixture('Beta', 3));
    await cli().json('member', 'add', '--workspace', a.workspaceId, '--email', ADMIN, '--name', 'Ada Admin', '--role', 'admin');
    await cli().json('member', 'add', '--workspace', b.workspaceId, '--email', ELSEWHERE, '--name', 'Elsa Elsewhere', '--role', 'owner');
    api = await startTestApi(db);
    const create = async (...argv: string[]) => (await cli().json<{ token: string }>('internal-token', 'create', ...argv)).token;
    tokens.granted = await create('--name', 'dashboard', '--integrations');
    tokens.ungranted = await create('--name', 'reporting');
    tokens.onlyB = await create('--name', 'beta-dashboard', '--workspaces', b.workspaceId, '--integrations');
    tokens.trusted = await create('--name', 'strict-dashboard', '--integrations', '--documents', 'trusted');
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('a token without the integrations grant is refused the mutations and Query.integrations with 403 INTEGRATIONS_NOT_GRANTED, nothing written; granted later, it acts from its next request', async () => {
    const before = await count('api_keys');
    const refused = await createKey(tokens.ungranted, OWNER_EMAIL);
    expect(refused.status).toBe(403);
    expect(codes(refused.body)).toEqual(['INTEGRATIONS_NOT_GRANTED']);
    expect(refused.body.errors![0]!.message).toContain('Mutation.createApiKey');
    expect(refused.body.errors![0]!.message).toContain('internal-token update --name reporting --integrations');
    const read = await post(tokens.ungranted, KEYS, { workspaceId: a.workspaceId, member: OWNER_EMAIL });
    expect([read.status, codes(read.body)]).toEqual([403, ['INTEGRATIONS_NOT_GRANTED']]);
    expect(await count('api_keys')).toBe(before);
    // The grant is listed, and a new token never has it.
    const listed = await cli().json<Array<{ name: string; integrations: boolean }>>('internal-token', 'list');
    expect(listed.find((token) => token.name === 'reporting')!.integrations).toBe(false);
    expect(listed.find((token) => token.name === 'dashboard')!.integrations).toBe(true);

    await cli().json('internal-token', 'update', '--name', 'reporting', '--integrations');
    const granted = await createKey(tokens.ungranted, OWNER_EMAIL);
    expect(granted.body.errors).toBeUndefined();
    await cli().json('internal-token', 'update', '--name', 'reporting', '--no-integrations');
    expect(codes((await createKey(tokens.ungranted, OWNER_EMAIL)).body)).toEqual(['INTEGRATIONS_NOT_GRANTED']);
  });

  it('auth.who-creates-keys: an owner and an admin create keys (the key in the answer once, never listed again); a plain member, a member of another workspace and a token of another workspace get FORBIDDEN, their e-mail not echoed', async () => {
    for (const member of [OWNER_EMAIL, ADMIN]) {
      const answer = await createKey(tokens.granted, member, { name: `by ${member}`, scopes: ['courses:read', 'bookings:read'] });
      expect(answer.body.errors).toBeUndefined();
      const issued = answer.body.data!.createApiKey as Issued & { scopes: string[] };
      expect(issued).toMatchObject({ id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^svc_api_/), scopes: ['courses:read', 'bookings:read'] });
      expect((await api.call(COURSES, { key: issued.key })).status).toBe(200);
      const listed = await post(tokens.granted, KEYS, { workspaceId: a.workspaceId, member });
      expect(JSON.stringify(listed.body)).not.toContain(issued.key);
      expect(JSON.stringify(listed.body)).toContain(issued.id);
    }
    const before = await count('api_keys');
    for (const [token, member, message] of [
      [tokens.granted, PLAIN, /^The member given as member has role member; only an owner or admin may do this$/],
      [tokens.granted, ELSEWHERE, /^No member with the e-mail given as member in workspace ws_/],
      [tokens.onlyB, OWNER_EMAIL, /This token may not act in workspace/],
    ] as const) {
      const refused = await createKey(token, member);
      expect(codes(refused.body), member).toEqual(['FORBIDDEN']);
      expect(refused.body.errors![0]!.message).toMatch(message);
      // The member's e-mail is personal data: the refusal names the argument, not the address.
      expect(JSON.stringify(refused.body)).not.toContain(member);
      expect(refused.body.data).toBeNull();
      const read = await post(token, KEYS, { workspaceId: a.workspaceId, member });
      expect(codes(read.body)).toEqual(['FORBIDDEN']);
    }
    expect(await count('api_keys')).toBe(before);
    // The member of the other workspace acts there, through the token restricted to it.
    expect((await createKey(tokens.onlyB, ELSEWHERE, { scopes: ['courses:read'] }, b.workspaceId)).body.errors).toBeUndefined();
  });

  it('bad input gets BAD_USER_INPUT naming the field and the rule, in the words the CLI uses for its option; nothing is written', async () => {
    const before = await count('api_keys');
    for (const [input, field, message, cliArgs, cliMessage] of [
      [
        { scopes: ['courses:read', 'everything'] },
        'scopes',
        'Unknown scope "everything"; valid scopes: courses:read, bookings:read, participants:read',
        ['--scopes', 'courses:read,everything'],
        'Unknown scope "everything"; valid scopes: courses:read, bookings:read, participants:read',
      ],
      [{ scopes: ['courses:read'], allowedIps: ['300.0.0.0/8'] }, 'allowedIps', 'allowedIps: "300.0.0.0/8" is not an IPv4 or IPv6 address or CIDR range', ['--allow-ip', '300.0.0.0/8'], '--allow-ip: "300.0.0.0/8" is not an IPv4 or IPv6 address or CIDR range'],
      [{ scopes: ['courses:read'], expiresIn: '10' }, 'expiresIn', 'expiresIn "10" is not a duration', ['--expires-in', '10'], '--expires-in "10" is not a duration'],
      [
        { scopes: ['courses:read'], expiresIn: '1d', expiresAt: '2030-01-01T00:00:00Z' },
        'expiresAt',
        'Give expiresIn or expiresAt, not both',
        ['--expires-in', '1d', '--expires-at', '2030-01-01T00:00:00Z'],
        'Give --expires-in or --expires-at, not both',
      ],
    ] as const) {
      const refused = await createKey(tokens.granted, OWNER_EMAIL, input);
      expect(codes(refused.body), field).toEqual(['BAD_USER_INPUT']);
      expect(refused.body.errors![0]!.message).toContain(message);
      expect((refused.body.errors![0]!.extensions as { field?: string }).field).toBe(field);
      // The CLI says the same rule, its option named instead of the field.
      const atCli = await cli().run('key', 'create', '--workspace', a.workspaceId, '--member', OWNER_EMAIL, '--scopes', 'courses:read', ...cliArgs);
      expect(atCli.code).toBe(1);
      expect(atCli.stderr).toContain(cliMessage);
    }
    expect(await count('api_keys')).toBe(before);
    // A key of another workspace is not found from this one.
    const elsewhere = await post(tokens.granted, REVOKE_KEY, { workspaceId: a.workspaceId, member: OWNER_EMAIL, id: (await db.query<{ id: string }>('SELECT id FROM api_keys WHERE workspace_id = $1 LIMIT 1', [b.workspaceId])).rows[0]!.id });
    expect(codes(elsewhere.body)).toEqual(['BAD_USER_INPUT']);
    expect(elsewhere.body.errors![0]!.message).toMatch(/^No API key with id "key_/);
    // A service without WEBHOOK_SECRET_KEY cannot seal a secret: its own state, not the client's input.
    const ADD = `mutation Add($workspaceId: ID!, $member: String!) { addWebhookEndpoint(workspaceId: $workspaceId, member: $member, input: { url: "https://receiver.example/hooks" }) { id } }`;
    const unsealed = await post(tokens.granted, ADD, { workspaceId: a.workspaceId, member: OWNER_EMAIL });
    expect(unsealed.body.errors).toEqual([
      { message: 'Webhook endpoints cannot be managed here: WEBHOOK_SECRET_KEY is not set on the service.', path: ['addWebhookEndpoint'], extensions: { code: 'service_unavailable' } },
    ]);
  });

  it('auth.revocation: a key revoked or fenced by an allow list through a mutation is refused at once; an honest key and an address inside the list are served', async () => {
    const created = (await createKey(tokens.granted, ADMIN, { name: 'fenced', scopes: ['courses:read'] })).body.data!.createApiKey as Issued;
    expect((await api.call(COURSES, { key: created.key })).status).toBe(200);
    const fenced = await post(tokens.granted, UPDATE_KEY, { workspaceId: a.workspaceId, member: ADMIN, id: created.id, input: { allowedIps: ['192.0.2.0/24'], name: 'fenced elsewhere' } });
    expect(fenced.body.data!.updateApiKey).toEqual({ id: created.id, name: 'fenced elsewhere', scopes: ['courses:read'], expiresAt: null, allowedIps: ['192.0.2.0/24'] });
    const outside = await api.call(COURSES, { key: created.key });
    expect([outside.status, (outside.body as { error: { code: string } }).error.code]).toEqual([403, 'ip_not_allowed']);
    await post(tokens.granted, UPDATE_KEY, { workspaceId: a.workspaceId, member: ADMIN, id: created.id, input: { allowedIps: ['127.0.0.0/8'] } });
    expect((await api.call(COURSES, { key: created.key })).status).toBe(200);
    const anywhere = await post(tokens.granted, UPDATE_KEY, { workspaceId: a.workspaceId, member: ADMIN, id: created.id, input: { allowedIps: null } });
    expect((anywhere.body.data!.updateApiKey as { allowedIps: unknown }).allowedIps).toBeNull();
    expect((await post(tokens.granted, REVOKE_KEY, { workspaceId: a.workspaceId, member: ADMIN, id: created.id })).body.data!.revokeApiKey).toEqual({ id: created.id, state: 'revoked' });
    expect((await api.call(COURSES, { key: created.key })).status).toBe(401);
    expect((await api.call(COURSES, { key: a.coursesOnlyKey })).status).toBe(200);
  });

  it('mutations meet trusted documents, the cost budget, the audit line and field usage as queries do', async () => {
    const variables = { workspaceId: a.workspaceId, member: OWNER_EMAIL, input: { scopes: ['courses:read'] } };
    const unregistered = await post(tokens.trusted, CREATE_KEY, variables);
    expect([unregistered.status, codes(unregistered.body)]).toEqual([403, ['DOCUMENT_NOT_TRUSTED']]);
    const dir = await mkdtemp(join(tmpdir(), 'integrations-'));
    try {
      await writeFile(join(dir, 'create-key.graphql'), CREATE_KEY);
      await cli().json('internal-token', 'documents', 'add', '--name', 'strict-dashboard', '--file', join(dir, 'create-key.graphql'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const registered = await post(tokens.trusted, CREATE_KEY, variables);
    expect(registered.body.errors).toBeUndefined();
    expect(registered.cost).toMatchObject({ budget: expect.any(Number), remaining: expect.any(Number) });
    expect(registered.cost!.actual).toBeGreaterThan(0);
    const lines = api.logs.map((line) => JSON.parse(line) as { audit?: string; tokenName?: string; operationName?: string; errorCodes?: string[] });
    expect(lines).toContainEqual(expect.objectContaining({ audit: 'internal-graphql', tokenName: 'strict-dashboard', operationName: 'CreateKey', errorCodes: [] }));
    // Neither the key nor the member's e-mail reaches a log line.
    const key = (registered.body.data!.createApiKey as Issued).key;
    expect(api.logs.join('\n')).not.toContain(key);
    expect(api.logs.join('\n')).not.toContain(OWNER_EMAIL);
    expect(await metricValue(api.server.internalUrl!, 'internal_graphql_field_uses_total', { type: 'Mutation', field: 'createApiKey', token: 'strict-dashboard' })).toBe(1);

    // A budget spent refuses the next mutation before it runs.
    const frugal = (await cli().json<{ token: string }>('internal-token', 'create', '--name', 'frugal-dashboard', '--integrations', '--cost-per-minute', '100')).token;
    const first = await createKey(frugal, OWNER_EMAIL);
    expect(first.body.errors).toBeUndefined();
    expect(first.cost!.estimate).toBe(75);
    const before = await count('api_keys');
    const refused = await createKey(frugal, OWNER_EMAIL);
    expect([refused.status, codes(refused.body)]).toEqual([429, ['RATE_LIMITED']]);
    expect(await count('api_keys')).toBe(before);
  });

  it("the audit's member e-mails are personal data: read with the personal-data grant only, the rest of an entry without it", async () => {
    const AUDIT = `query Audit($workspaceId: ID!, $member: String!) { integrations(workspaceId: $workspaceId, member: $member) { audit { operation memberEmail } } }`;
    const refused = await post(tokens.granted, AUDIT, { workspaceId: a.workspaceId, member: OWNER_EMAIL });
    expect([refused.status, codes(refused.body)]).toEqual([403, ['PERSONAL_DATA_NOT_GRANTED']]);
    expect(refused.body.errors![0]!.message).toContain('IntegrationAuditEntry.memberEmail');
    const withoutEmails = await post(tokens.granted, AUDIT.replace(' memberEmail', ''), { workspaceId: a.workspaceId, member: OWNER_EMAIL });
    expect((withoutEmails.body.data!.integrations as { audit: unknown[] }).audit).toContainEqual({ operation: 'key.create' });
    await cli().json('internal-token', 'update', '--name', 'dashboard', '--personal-data');
    const granted = await post(tokens.granted, AUDIT, { workspaceId: a.workspaceId, member: OWNER_EMAIL });
    expect((granted.body.data!.integrations as { audit: unknown[] }).audit).toContainEqual({ operation: 'key.create', memberEmail: ADMIN });
  });

  it("docs/internal-graphql.md's example request, sent as written for a workspace and its owner, creates the key it shows; its refusal is the one quoted", async () => {
    const example = [...DOCS.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1]!).find((block) => block.includes('createApiKey'))!;
    const body = JSON.parse(example.replace('ws_…', a.workspaceId).replace('owner@example.com', OWNER_EMAIL)) as { query: string; variables: Record<string, unknown> };
    const answer = await post(tokens.granted, body.query, body.variables);
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data!.createApiKey).toMatchObject({ scopes: ['courses:read'], allowedIps: ['203.0.113.0/24'], expiresAt: expect.stringMatching(/Z$/) });
    const refused = await post(tokens.granted, body.query, { ...body.variables, input: { scopes: ['courses:read'], allowedIps: ['300.0.0.0/8'] } });
    expect(DOCS).toContain(JSON.stringify({ message: refused.body.errors![0]!.message, extensions: refused.body.errors![0]!.extensions }));
  });
});
