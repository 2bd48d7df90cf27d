import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { getGraphQL, metricValue, postGraphQL, type InternalAnswer } from '../support/internal-graphql.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const MARKDOWN = readFileSync(new URL('../../docs/internal-graphql.md', import.meta.url), 'utf8');

/** A file of one operation, registered byte for byte. */
const NAME_FILE = 'query WorkspaceName($id: ID!) {\n  workspace(id: $id) { name }\n}\n';
/** As GraphQL Code Generator's client preset prints a document into persisted-documents.json. */
const RUNS_DOCUMENT = 'query WorkspaceRuns($id: ID!) {\n  workspace(id: $id) {\n    courseRunsConnection(first: 5) {\n      totalCount\n    }\n  }\n}';
/** As Apollo's generate-persisted-query-manifest writes an operation's body. */
const BOOKINGS_DOCUMENT = 'query WorkspaceBookings($id: ID!) {\n  workspace(id: $id) {\n    bookingsConnection(first: 2) {\n      nodes {\n        id\n      }\n    }\n  }\n}';
const UNREGISTERED = 'query Unregistered($id: ID!) { workspace(id: $id) { id name } }';

describeOnEachDatabase('trusted documents on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let dir: string;
  const tokens: Record<'any' | 'log' | 'trusted', string> = { any: '', log: '', trusted: '' };
  const cli = () => cliOn(db);
  const url = () => api.server.internalUrl!;
  const post = (token: string, body: Record<string, unknown>) => postGraphQL(url(), token, { variables: { id: ws.workspaceId }, ...body });
  const expectRefusal = (answer: InternalAnswer, status: number, code: string) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.body.data).toBeUndefined();
    expect(answer.body.errors).toEqual([{ message: expect.any(String), extensions: { code } }]);
  };
  const files = async () => {
    const graphql = join(dir, 'workspace-name.graphql');
    const codegen = join(dir, 'persisted-documents.json');
    const apollo = join(dir, 'persisted-query-manifest.json');
    await writeFile(graphql, NAME_FILE);
    await writeFile(codegen, JSON.stringify({ [sha256(RUNS_DOCUMENT)]: RUNS_DOCUMENT }, null, 2));
    await writeFile(
      apollo,
      JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: sha256(BOOKINGS_DOCUMENT), name: 'WorkspaceBookings', type: 'query', body: BOOKINGS_DOCUMENT }] }),
    );
    return [graphql, codegen, apollo];
  };

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Trusted', 6));
    api = await startTestApi(db);
    dir = await mkdtemp(join(tmpdir(), 'trusted-documents-'));
    for (const mode of ['any', 'log', 'trusted'] as const) {
      tokens[mode] = (await cli().json<{ token: string }>('internal-token', 'create', '--name', `team-${mode}`, '--documents', mode)).token;
    }
    for (const file of await files()) {
      for (const mode of ['log', 'trusted']) {
        const added = await cli().json<{ added: number; documents: Array<{ id: string }> }>('internal-token', 'documents', 'add', '--name', `team-${mode}`, '--file', file);
        expect(added.added).toBe(1);
      }
    }
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('documents add registers a file of operations, a GraphQL Code Generator manifest and an Apollo manifest; list shows their ids; adding again adds nothing', async () => {
    const listed = await cli().json<Array<{ id: string; operationNames: string[] }>>('internal-token', 'documents', 'list', '--name', 'team-trusted');
    expect(listed.map((document) => [document.id, document.operationNames])).toEqual(
      expect.arrayContaining([
        [`sha256:${sha256(NAME_FILE)}`, ['WorkspaceName']],
        [`sha256:${sha256(RUNS_DOCUMENT)}`, ['WorkspaceRuns']],
        [`sha256:${sha256(BOOKINGS_DOCUMENT)}`, ['WorkspaceBookings']],
      ]),
    );
    expect(listed).toHaveLength(3);
    const again = await cli().json<{ added: number; alreadyRegistered: number }>('internal-token', 'documents', 'add', '--name', 'team-trusted', '--file', join(dir, 'persisted-documents.json'));
    expect(again).toMatchObject({ added: 0, alreadyRegistered: 1 });
  });

  describe('a token in trusted mode', () => {
    it('runs a registered document named by documentId (GraphQL over HTTP), by Apollo persisted query hash, and sent whole', async () => {
      for (const body of [
        { documentId: `sha256:${sha256(NAME_FILE)}` },
        { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(NAME_FILE) } } },
        { query: NAME_FILE },
        { query: NAME_FILE, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(NAME_FILE) } } },
      ]) {
        const answer = await post(tokens.trusted, body);
        expect(answer.status, JSON.stringify(body)).toBe(200);
        expect(answer.body).toEqual({ data: { workspace: { name: 'Trusted' } } });
      }
      const runs = await post(tokens.trusted, { documentId: `sha256:${sha256(RUNS_DOCUMENT)}` });
      expect(runs.body).toEqual({ data: { workspace: { courseRunsConnection: { totalCount: expect.any(Number) } } } });
      const bookings = await post(tokens.trusted, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(BOOKINGS_DOCUMENT) } } });
      expect(bookings.body.data).toEqual({ workspace: { bookingsConnection: { nodes: [{ id: expect.any(String) }, { id: expect.any(String) }] } } });
    });

    it('answers a GET naming a registered document by documentId, as Apollo Server answers a GET query', async () => {
      const answer = await getGraphQL(url(), tokens.trusted, { documentId: `sha256:${sha256(NAME_FILE)}`, variables: JSON.stringify({ id: ws.workspaceId }) });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ data: { workspace: { name: 'Trusted' } } });
    });

    it('an unknown hash gets 404 PERSISTED_QUERY_NOT_FOUND in both forms, and nothing but the token and document lookups runs', async () => {
      const unknown = sha256('query Nothing { __typename }');
      for (const body of [{ documentId: `sha256:${unknown}` }, { extensions: { persistedQuery: { version: 1, sha256Hash: unknown } } }]) {
        const statements = await captureStatements(db, async () => expectRefusal(await post(tokens.trusted, body), 404, 'PERSISTED_QUERY_NOT_FOUND'));
        expect(statements).toHaveLength(2);
        expect(statements[1]).toMatch(/FROM internal_token_documents/);
      }
    });

    it('an unregistered document sent whole gets 403 DOCUMENT_NOT_TRUSTED, counted in /metrics, and never runs', async () => {
      const before = await metricValue(url(), 'internal_graphql_unregistered_documents_total', { token: 'team-trusted', mode: 'trusted' });
      const statements = await captureStatements(db, async () => expectRefusal(await post(tokens.trusted, { query: UNREGISTERED }), 403, 'DOCUMENT_NOT_TRUSTED'));
      expect(statements.some((text) => /FROM workspaces/.test(text))).toBe(false);
      // GraphiQL's introspection is a document like any other: a trusted token's explorer cannot load the schema.
      expectRefusal(await post(tokens.trusted, { query: '{ __schema { queryType { name } } }' }), 403, 'DOCUMENT_NOT_TRUSTED');
      expect(await metricValue(url(), 'internal_graphql_unregistered_documents_total', { token: 'team-trusted', mode: 'trusted' })).toBe(before + 2);
    });

    it('documents are registered per token: another token’s document, and any document for the bootstrap token, is not found by hash', async () => {
      expectRefusal(await post(tokens.any, { documentId: `sha256:${sha256(NAME_FILE)}` }), 404, 'PERSISTED_QUERY_NOT_FOUND');
      expectRefusal(await post(INTERNAL_TOKEN, { documentId: `sha256:${sha256(NAME_FILE)}` }), 404, 'PERSISTED_QUERY_NOT_FOUND');
    });
  });

  it('a token in log mode runs an unregistered document, logs it once with the token’s name and counts it; registered ones are not logged', async () => {
    const before = await metricValue(url(), 'internal_graphql_unregistered_documents_total', { token: 'team-log', mode: 'log' });
    const logged = () => api.logs.filter((line) => line.includes('"internal graphql document not registered for its token"')).map((line) => JSON.parse(line) as Record<string, unknown>);
    const already = logged().length;
    const answer = await post(tokens.log, { query: UNREGISTERED, operationName: 'Unregistered' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { workspace: { id: ws.workspaceId, name: 'Trusted' } } });
    expect(logged().slice(already)).toEqual([expect.objectContaining({ level: 40, tokenName: 'team-log', documentHash: sha256(UNREGISTERED), operationName: 'Unregistered' })]);
    expect(await metricValue(url(), 'internal_graphql_unregistered_documents_total', { token: 'team-log', mode: 'log' })).toBe(before + 1);
    expect((await post(tokens.log, { query: NAME_FILE })).status).toBe(200);
    expect((await post(tokens.log, { documentId: `sha256:${sha256(NAME_FILE)}` })).body).toEqual({ data: { workspace: { name: 'Trusted' } } });
    expect(logged().length).toBe(already + 1);
  });

  it('a token in any mode runs every document and logs none', async () => {
    const answer = await post(tokens.any, { query: UNREGISTERED });
    expect(answer.body).toEqual({ data: { workspace: { id: ws.workspaceId, name: 'Trusted' } } });
    expect(api.logs.some((line) => line.includes('"tokenName":"team-any"') && line.includes('not registered'))).toBe(false);
  });

  it('malformed ids, a hash that is not the document’s and an unknown persisted query version get 400 invalid_request, never a 5xx', async () => {
    const registered = sha256(NAME_FILE);
    for (const body of [
      { documentId: 'md5:0123456789abcdef0123456789abcdef' },
      { documentId: `sha256:${registered.slice(1)}` },
      { documentId: 42 },
      { documentId: `sha256:${registered}`, extensions: { persistedQuery: { version: 1, sha256Hash: sha256(RUNS_DOCUMENT) } } },
      { extensions: { persistedQuery: { version: 2, sha256Hash: registered } } },
      { extensions: { persistedQuery: { version: 1, sha256Hash: registered.toUpperCase() } } },
      { extensions: { persistedQuery: 'yes' } },
      { query: UNREGISTERED, documentId: `sha256:${registered}` },
    ]) {
      for (const token of [tokens.trusted, tokens.any]) {
        const answer = await post(token, body);
        expect(answer.status, JSON.stringify(body)).toBe(400);
        expect(answer.body.errors?.[0]?.extensions?.code, JSON.stringify(body)).toBe('invalid_request');
      }
    }
  });

  it('document ids follow the one rule the page states (64 lowercase hexadecimal characters, after sha256: or alone) in documentId, GET and POST, and in documents remove --id; anything else is refused', async () => {
    expect(MARKDOWN).toContain('**A document id** is the SHA-256 of the\ndocument as 64 lowercase hexadecimal characters, after `sha256:` or alone');
    const hex = sha256(NAME_FILE);
    for (const id of [`sha256:${hex}`, hex]) {
      expect((await post(tokens.trusted, { documentId: id })).body, id).toEqual({ data: { workspace: { name: 'Trusted' } } });
      expect((await getGraphQL(url(), tokens.trusted, { documentId: id, variables: JSON.stringify({ id: ws.workspaceId }) })).body, id).toEqual({ data: { workspace: { name: 'Trusted' } } });
    }
    const refused = [hex.toUpperCase(), `sha256:${hex.toUpperCase()}`, `SHA256:${hex}`, `sha1:${hex}`, `sha256:${hex.slice(1)}`, `${hex}0`, `sha256: ${hex}`, `sha256:sha256:${hex}`];
    for (const id of refused) {
      const answer = await post(tokens.trusted, { documentId: id });
      expect(answer.status, id).toBe(400);
      expect(answer.body.errors?.[0], id).toEqual({ message: expect.stringContaining('64 lowercase hexadecimal characters, alone or after sha256:'), extensions: { code: 'invalid_request' } });
    }
    await cli().json('internal-token', 'create', '--name', 'ids', '--documents', 'trusted');
    await cli().json('internal-token', 'documents', 'add', '--name', 'ids', '--file', join(dir, 'workspace-name.graphql'));
    for (const id of refused) expect((await cli().run('internal-token', 'documents', 'remove', '--name', 'ids', '--id', id)).stderr, id).toMatch(/is not a document id/);
    expect(await cli().json('internal-token', 'documents', 'remove', '--name', 'ids', '--id', hex)).toEqual({ removed: 1 });
  });

  it('a removed document and a changed mode apply from the next request on', async () => {
    const { token } = await cli().json<{ token: string }>('internal-token', 'create', '--name', 'short-lived', '--documents', 'trusted');
    await cli().json('internal-token', 'documents', 'add', '--name', 'short-lived', '--file', join(dir, 'workspace-name.graphql'));
    expect((await post(token, { documentId: `sha256:${sha256(NAME_FILE)}` })).status).toBe(200);
    const removed = await cli().json('internal-token', 'documents', 'remove', '--name', 'short-lived', '--id', `sha256:${sha256(NAME_FILE)}`);
    expect(removed).toEqual({ removed: 1 });
    expectRefusal(await post(token, { documentId: `sha256:${sha256(NAME_FILE)}` }), 404, 'PERSISTED_QUERY_NOT_FOUND');
    expectRefusal(await post(token, { query: NAME_FILE }), 403, 'DOCUMENT_NOT_TRUSTED');
    expect(await cli().json('internal-token', 'update', '--name', 'short-lived', '--documents', 'log')).toMatchObject({ documents: 'log', costPerMinute: null });
    expect((await post(token, { query: NAME_FILE })).status).toBe(200);
  });

  it('the CLI refuses files it cannot register, naming what is wrong, and registers nothing from them', async () => {
    const bad = async (name: string, text: string, message: RegExp) => {
      const file = join(dir, name);
      await writeFile(file, text);
      const result = await cli().run('internal-token', 'documents', 'add', '--name', 'team-any', '--file', file);
      expect(result.code, result.stdout).not.toBe(0);
      expect(result.stderr).toMatch(message);
    };
    const sha1 = createHash('sha1').update(RUNS_DOCUMENT).digest('hex');
    await bad('sha1.json', JSON.stringify({ [sha1]: RUNS_DOCUMENT }), /not a SHA-256 document id.*hashAlgorithm "sha256"/);
    await bad('wrong.json', JSON.stringify({ [sha256('other')]: RUNS_DOCUMENT }), /not the SHA-256 of its text/);
    await bad('mixed.json', JSON.stringify({ [sha256(RUNS_DOCUMENT)]: RUNS_DOCUMENT, [sha256('{')]: '{' }), /not a GraphQL document/);
    await bad('schema.graphql', 'type Query { x: Int }', /only operations and fragments/);
    await bad('broken.json', '{"a": ', /not valid JSON/);
    const missing = await cli().run('internal-token', 'documents', 'add', '--name', 'team-any', '--file', join(dir, 'absent.graphql'));
    expect(missing.stderr).toMatch(/Cannot read .*absent\.graphql: ENOENT/);
    const nobody = await cli().run('internal-token', 'documents', 'add', '--name', 'nobody', '--file', join(dir, 'workspace-name.graphql'));
    expect(nobody.stderr).toMatch(/No active internal token named "nobody"/);
    const typo = await cli().run('internal-token', 'documents', 'remove', '--name', 'team-log', '--id', `sha256:${sha256(NAME_FILE)}`, `sha256:${sha256('absent')}`);
    expect(typo.stderr).toMatch(/nothing was removed/);
    expect(await cli().json<unknown[]>('internal-token', 'documents', 'list', '--name', 'team-any')).toEqual([]);
    expect(await cli().json<unknown[]>('internal-token', 'documents', 'list', '--name', 'team-log')).toHaveLength(3);
    const mode = await cli().run('internal-token', 'create', '--name', 'x', '--documents', 'some');
    expect(mode.stderr).toMatch(/--documents must be one of any, log, trusted/);
  });
});
