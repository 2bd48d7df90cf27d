import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { postGraphQL } from '../support/internal-graphql.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';

const MARKDOWN = readFileSync(new URL('../../docs/internal-graphql.md', import.meta.url), 'utf8');
const blocks = (language: string) => [...MARKDOWN.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]!);
const QUERIES = blocks('graphql');
const queryNamed = (name: string) => QUERIES.find((query) => query.includes(`query ${name}(`))!;

/** The lists an answer holds at its first two levels: plain lists and connections' edges or nodes. */
function listsOf(root: Record<string, unknown>): unknown[][] {
  const lists: unknown[][] = [];
  for (const value of Object.values(root)) {
    if (Array.isArray(value)) lists.push(value);
    else if (value && typeof value === 'object') {
      for (const [name, inner] of Object.entries(value)) if ((name === 'edges' || name === 'nodes') && Array.isArray(inner)) lists.push(inner);
    }
  }
  return lists;
}

describe('docs/internal-graphql.md against the internal listener', () => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let other: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    ws = await seedWorkspace(db, contractFixture('Internal', 12));
    other = await seedWorkspace(db, contractFixture('Other', 3));
    api = await startTestApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('has example queries, paging through all bookings and a date-range filter among them', () => {
    expect(QUERIES.length).toBeGreaterThanOrEqual(7);
    expect(queryNamed('AllBookings')).toContain('after: $after');
    expect(queryNamed('BookingsInJuly')).toMatch(/createdAt: \{ gte: "[^"]+", lt: "[^"]+" \}/);
  });

  it.each(QUERIES.map((query) => [/query (\w+)/.exec(query)?.[1] ?? query.slice(0, 40), query]))('the example query %s answers without errors', async (_name, query) => {
    const variables = { workspaceId: ws.workspaceId, courseRunId: ws.ids.r1, bookingId: ws.ids.b1, after: null };
    const { status, body } = await api.graphql(query!, variables);
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    const root = Object.values(body.data ?? {})[0] as Record<string, unknown> | null;
    expect(root).not.toBeNull();
    for (const list of listsOf(root!)) expect(list.length).toBeGreaterThan(0);
  });

  it('the paging loop, run as written, reads every booking of the workspace exactly once, in order', async () => {
    const loop = blocks('ts').find((block) => block.includes('pageInfo.endCursor'));
    expect(loop).toContain('pageInfo.endCursor');
    const javascript = loop!.replace('let after: string | null = null;', 'let after = null;');
    const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<void>;
    const seen: string[] = [];
    let requests = 0;
    // Pages of 5, so that the loop turns more than once over the 12 bookings.
    const graphql = async (query: string, variables: Record<string, unknown>) => {
      requests += 1;
      return (await api.graphql(query.replace('first: 100', 'first: 5'), variables)).body;
    };
    await new AsyncFunction('graphql', 'ALL_BOOKINGS', 'workspaceId', 'handle', javascript)(graphql, queryNamed('AllBookings'), ws.workspaceId, (node: { id: string }) =>
      seen.push(node.id),
    );
    const expected = (await db.query<{ id: string }>('SELECT id FROM bookings WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC', [ws.workspaceId])).rows.map((row) => row.id);
    expect(expected).toHaveLength(12);
    expect(seen).toEqual(expected);
    expect(requests).toBe(3);
  });

  it('"Where it is", run as written: the token is exported before npm start, and the curl line in a second terminal answers with it', async () => {
    const block = blocks('sh').find((candidate) => candidate.includes('openssl rand'))!;
    const commands = block.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
    // Exported, not a prefix of npm start alone: the second terminal's curl needs the same value.
    expect(commands[0]).toMatch(/^export INTERNAL_API_TOKEN=\$\(openssl rand -hex 24\)/);
    expect(commands[1]).toMatch(/^npm start\b/);
    const curl = block.slice(block.indexOf('curl ')).replace('http://127.0.0.1:4001', api.server.internalUrl!).replace('ws_…', ws.workspaceId);
    const { stdout } = await promisify(execFile)('bash', ['-c', curl], { env: { ...process.env, INTERNAL_API_TOKEN: INTERNAL_TOKEN } });
    expect(JSON.parse(stdout)).toMatchObject({ data: { workspace: { name: 'Internal' } } });
  });

  it('the token commands, run as written, give a token that reads only its workspace, then only registered documents, until it is revoked', async () => {
    const commands = blocks('sh').find((block) => block.includes('internal-token create'));
    const lines = commands!.trim().split('\n');
    expect(lines).toHaveLength(4);
    const argv = (line: string) =>
      line
        .replace(/^npm run --silent admin -- /, '')
        .split(/\s+/)
        .map((word) => word.replace('ws_…', ws.workspaceId));
    const cli = cliOn(db);
    const created = await cli.run(...argv(lines[0]!));
    expect(created.code).toBe(0);
    const token = /svc_int_[0-9A-Za-z]{38}/.exec(created.stdout)![0];
    const listed = await cli.run(...argv(lines[1]!));
    expect(listed.stdout).toMatch(/active .*reporting/);

    const read = (workspaceId: string) => api.graphql(`query ($id: ID!) { workspace(id: $id) { name } }`, { id: workspaceId }, token);
    expect((await read(ws.workspaceId)).body.data).toEqual({ workspace: { name: 'Internal' } });
    expect((await read(other.workspaceId)).body.data).toEqual({ workspace: null });
    expect((await read(ws.workspaceId)).cost?.budget).toBe(50_000);

    expect((await cli.run(...argv(lines[2]!))).code).toBe(0);
    expect((await read(ws.workspaceId)).body.errors?.[0]?.extensions?.code).toBe('DOCUMENT_NOT_TRUSTED');
    expect((await cli.run(...argv(lines[3]!))).code).toBe(0);
    expect((await read(ws.workspaceId)).status).toBe(401);
  });

  it('an audit line has exactly the fields the page shows', async () => {
    const example = blocks('json').find((block) => block.includes('"audit":"internal-graphql"'));
    await api.graphql(queryNamed('AllBookings'), { workspaceId: ws.workspaceId, after: null });
    const line = api.logs.map((text) => JSON.parse(text) as Record<string, unknown>).findLast((entry) => entry.audit === 'internal-graphql');
    expect(Object.keys(line!).sort()).toEqual(Object.keys(JSON.parse(example!) as object).sort());
  });

  it('answers a query deeper than 10 levels with the message the page quotes', async () => {
    const deep = `{ booking(id: "x") { courseRun { bookingsConnection { nodes { courseRun { bookingsConnection { nodes { courseRun { bookingsConnection { nodes { courseRun { id } } } } } } } } } } } }`;
    const { status, body } = await api.graphql(deep);
    expect(status).toBe(400);
    expect(body.errors?.[0]).toEqual({ message: 'Query depth limit of 10 exceeded, found 12.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    expect(MARKDOWN).toContain('`Query depth limit of 10 exceeded, found <n>.`');
  });

  it('answers more than 15 aliases and more than 1,000 tokens with the messages the page quotes', async () => {
    const aliases = await api.graphql(`{ ${Array.from({ length: 16 }, (_, i) => `t${i}: __typename`).join(' ')} }`);
    expect(aliases.status).toBe(400);
    expect(aliases.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(MARKDOWN).toContain(`\`${aliases.body.errors![0]!.message.replace('found 16', 'found <n>')}\``);
    const tokens = await api.graphql(`{ ${'__typename '.repeat(1001)}}`);
    expect(tokens.status).toBe(400);
    expect(tokens.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(MARKDOWN).toContain(`\`${tokens.body.errors![0]!.message}\``);
  });

  it('answers the size example with the message the page quotes, and its smaller form without errors', async () => {
    const example = (inner: number) =>
      `query ($id: ID!) { workspace(id: $id) { bookingsConnection(first: 100) { nodes { courseRun { bookingsConnection(first: ${inner}) { nodes { id status } } } } } } }`;
    const refused = await api.graphql(example(100), { id: ws.workspaceId });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]).toEqual({
      message: expect.stringMatching(/^Query size 30\d{3} exceeds the limit of 20000; select fewer fields or lower "first"\.$/),
      extensions: { code: 'invalid_request' },
    });
    expect(MARKDOWN).toContain('Query size <n> exceeds the limit of 20000; select fewer fields or lower "first".');
    const smaller = await api.graphql(example(20), { id: ws.workspaceId });
    expect(smaller.body.errors).toBeUndefined();
  });

  it('answers a whole list, which this endpoint does not serve, with the message the page quotes', async () => {
    const { status, body } = await api.graphql(`query ($id: ID!) { workspace(id: $id) { courses { id } } }`, { id: ws.workspaceId });
    expect(status).toBe(400);
    expect(MARKDOWN).toContain(body.errors![0]!.message);
  });

  it('refuses a body over 100 kB with 413 and a body that is not JSON with 400, with the messages the page quotes', async () => {
    const send = (body: string) =>
      fetch(`${api.server.internalUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${INTERNAL_TOKEN}` }, body });
    const large = await send(JSON.stringify({ query: `{ __typename }${' '.repeat(110_000)}` }));
    expect(large.status).toBe(413);
    const largeBody = (await large.json()) as { errors: [{ message: string; extensions: { code: string } }] };
    expect(largeBody.errors[0].extensions.code).toBe('payload_too_large');
    expect(MARKDOWN).toContain(`\`${largeBody.errors[0].message}\``);
    const malformed = await send('{bad json');
    expect(malformed.status).toBe(400);
    const malformedBody = (await malformed.json()) as { errors: [{ message: string; extensions: { code: string } }] };
    expect(malformedBody.errors[0].extensions.code).toBe('invalid_request');
    expect(MARKDOWN).toContain(`\`${malformedBody.errors[0].message}\``);
  });
});

describe('docs/internal-graphql.md: trusted documents and cost budgets, as written', () => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let dir: string;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    ws = await seedWorkspace(db, contractFixture('Documents', 6));
    // The default budget, which the page shows.
    api = await startTestApi(db, { INTERNAL_COST_PER_MINUTE: '100000' });
    dir = await mkdtemp(join(tmpdir(), 'docs-documents-'));
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a manifest in GraphQL Code Generator’s form, registered with the documented commands, runs by both documented request forms with the documented cost; removed, it is not found', async () => {
    const cli = cliOn(db);
    const { token } = await cli.json<{ token: string }>('internal-token', 'create', '--name', 'team-docs', '--documents', 'trusted');
    const document = queryNamed('Timetable');
    const hash = createHash('sha256').update(document, 'utf8').digest('hex');
    const manifest = join(dir, 'persisted-documents.json');
    await writeFile(manifest, JSON.stringify({ [hash]: document }));

    const commands = blocks('sh').find((block) => block.includes('documents add'))!.trim().split('\n');
    expect(commands).toHaveLength(3);
    const argv = (line: string) =>
      line
        .replace(/^npm run --silent admin -- /, '')
        .replace(/\s+#.*$/, '')
        .split(/\s+/)
        .map((word) => word.replace('reporting', 'team-docs').replace('src/gql/persisted-documents.json', manifest).replace('sha256:…', `sha256:${hash}`));
    const added = await cli.run(...argv(commands[0]!));
    expect(added.code, added.stderr).toBe(0);
    expect((await cli.run(...argv(commands[1]!))).stdout).toContain(`sha256:${hash}`);

    const forms = blocks('json').find((block) => block.includes('"documentId"'))!.trim().split('\n');
    expect(forms).toHaveLength(2);
    for (const form of forms) {
      const body = JSON.parse(form.replace('<hex>', hash).replace('ws_…', ws.workspaceId)) as unknown;
      const answer = await postGraphQL(api.server.internalUrl!, token, body);
      expect(answer.status, form).toBe(200);
      expect(answer.body.errors).toBeUndefined();
      expect(answer.body.data).toMatchObject({ workspace: { name: 'Documents' } });
      // The budget as the page shows it: the same fields, the same headers.
      const example = JSON.parse(blocks('json').find((block) => block.includes('"cost"'))!.replace('{…}', '{}')) as { extensions: { cost: object } };
      expect(Object.keys(answer.cost!).sort()).toEqual(Object.keys(example.extensions.cost).sort());
      expect(answer.headers.get('ratelimit-policy')).toBe('"cost";q=100000;w=60');
      expect(answer.headers.get('ratelimit')).toMatch(/^"cost";r=\d+;t=\d+$/);
      expect(MARKDOWN).toContain('RateLimit-Policy: "cost";q=100000;w=60');
    }
    expect((await cli.run(...argv(commands[2]!))).code).toBe(0);
    const removed = await postGraphQL(api.server.internalUrl!, token, { documentId: `sha256:${hash}`, variables: { workspaceId: ws.workspaceId } });
    expect(removed.status).toBe(404);
    expect(removed.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});
