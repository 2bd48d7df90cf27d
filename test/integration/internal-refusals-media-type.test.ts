import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/** Accept headers and the media type GraphQL over HTTP (and Apollo Server) answers them with. */
const NEGOTIATED: Array<[accept: string | null, type: RegExp]> = [
  ['application/graphql-response+json', /^application\/graphql-response\+json; charset=utf-8$/],
  ['application/graphql-response+json,application/json;q=0.9', /^application\/graphql-response\+json; charset=utf-8$/],
  ['application/graphql-response+json, application/json', /^application\/graphql-response\+json; charset=utf-8$/],
  ['application/json', /^application\/json; charset=utf-8$/],
  ['*/*', /^application\/json; charset=utf-8$/],
  [null, /^application\/json; charset=utf-8$/],
];

describeOnEachDatabase('refusals of the internal endpoint in the media type the client asks for, on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let trusted: string;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Media types', 3));
    api = await startTestApi(db);
    trusted = (await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'media', '--documents', 'trusted')).token;
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  const query = 'query ($id: ID!) { workspace(id: $id) { name } }';
  const REFUSALS: Array<[what: string, token: () => string, body: () => string, status: number, code: string]> = [
    ['no valid token', () => 'not-a-token', () => JSON.stringify({ query }), 401, 'invalid_api_key'],
    ['a document its trusted token has not registered', () => trusted, () => JSON.stringify({ query, variables: { id: ws.workspaceId } }), 403, 'DOCUMENT_NOT_TRUSTED'],
    ['a hash no document is registered under', () => trusted, () => JSON.stringify({ documentId: `sha256:${'0'.repeat(64)}` }), 404, 'PERSISTED_QUERY_NOT_FOUND'],
    ['a documentId that is no document id', () => INTERNAL_TOKEN, () => JSON.stringify({ documentId: 'md5:0' }), 400, 'invalid_request'],
    ['a body that is not JSON', () => INTERNAL_TOKEN, () => '{bad json', 400, 'invalid_request'],
    ['a body over 100 kB', () => INTERNAL_TOKEN, () => JSON.stringify({ query: `{ __typename }${' '.repeat(110_000)}` }), 413, 'payload_too_large'],
    ['a document that does not validate (Apollo Server’s own)', () => INTERNAL_TOKEN, () => JSON.stringify({ query: '{ nope }' }), 400, 'GRAPHQL_VALIDATION_FAILED'],
  ];

  it.each(REFUSALS)('%s: the status, the code in extensions.code, and the negotiated media type for every Accept', async (_what, token, body, status, code) => {
    for (const [accept, type] of NEGOTIATED) {
      const response = await fetch(`${api.server.internalUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}`, ...(accept === null ? {} : { accept }) },
        body: body(),
      });
      expect(response.status, `Accept: ${accept}`).toBe(status);
      expect(response.headers.get('content-type'), `Accept: ${accept}`).toMatch(type);
      const parsed = (await response.json()) as { errors: Array<{ extensions: { code: string } }> };
      expect(parsed.errors[0]!.extensions.code).toBe(code);
    }
  });

  it.each(REFUSALS.filter(([, , , , code]) => code !== 'GRAPHQL_VALIDATION_FAILED'))('%s, to a client that accepts neither JSON type: still the refusal, as JSON (Apollo Server would answer 406 instead)', async (_what, token, body, status, code) => {
    const response = await fetch(`${api.server.internalUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}`, accept: 'text/plain' }, body: body() });
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/json; charset=utf-8$/);
    expect(((await response.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0]!.extensions.code).toBe(code);
  });
});
