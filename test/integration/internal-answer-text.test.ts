import { beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { INTERNAL_TOKEN, type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/**
 * The text of an internal GraphQL answer, as Apollo Server's own stringifier wrote it: the JSON of
 * the answer then a newline, its Content-Length its bytes in UTF-8 (graphql-handler.ts writes the
 * newline itself, into one Buffer with the text).
 */
describeOnEachDatabase('the text of internal GraphQL answers on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    ({ db, api } = await sharedTestApi(target));
    // Characters of two, three and four bytes in UTF-8.
    ws = await seedWorkspace(db, contractFixture('Zürich ✓ 🎓', 3));
  });

  const post = async (body: string) => {
    const response = await fetch(`${api.server.internalUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${INTERNAL_TOKEN}` },
      body,
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    return { response, bytes, text: bytes.toString('utf8') };
  };

  it('an answer is its JSON and a newline, Content-Length its bytes', async () => {
    const { response, bytes, text } = await post(JSON.stringify({ query: 'query ($id: ID!) { workspace(id: $id) { name } }', variables: { id: ws.workspaceId } }));
    expect(response.status).toBe(200);
    const answer = JSON.parse(text) as { data: { workspace: { name: string } } };
    expect(answer.data.workspace.name).toBe('Zürich ✓ 🎓');
    expect(text).toBe(`${JSON.stringify(answer)}\n`);
    expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
    expect(bytes.length).toBeGreaterThan(text.length);
  });

  it('so is a refusal Apollo Server makes (a document that does not validate)', async () => {
    const { response, bytes, text } = await post(JSON.stringify({ query: '{ nope }' }));
    expect(response.status).toBe(400);
    expect(text).toBe(`${JSON.stringify(JSON.parse(text))}\n`);
    expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
  });
});
