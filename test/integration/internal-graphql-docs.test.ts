import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';

const MARKDOWN = readFileSync(new URL('../../docs/internal-graphql.md', import.meta.url), 'utf8');
const QUERIES = [...MARKDOWN.matchAll(/```graphql\n([\s\S]*?)```/g)].map((match) => match[1]!);

describe('docs/internal-graphql.md against the internal listener', () => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    ws = await seedWorkspace(db, contractFixture('Internal', 12));
    api = await startTestApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('has example queries', () => {
    expect(QUERIES.length).toBeGreaterThanOrEqual(5);
  });

  it.each(QUERIES.map((query) => [/query (\w+)/.exec(query)?.[1] ?? query.slice(0, 40), query]))('the example query %s answers without errors', async (_name, query) => {
    const variables = { workspaceId: ws.workspaceId, courseRunId: ws.ids.r1, bookingId: ws.ids.b1 };
    const { status, body } = await api.graphql(query!, variables);
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    const root = Object.values(body.data ?? {})[0] as Record<string, unknown> | null;
    expect(root).not.toBeNull();
    for (const value of Object.values(root!)) if (Array.isArray(value)) expect(value.length).toBeGreaterThan(0);
  });

  it('answers a query deeper than 8 levels with the message the page quotes', async () => {
    const deep = `{ booking(id: "x") { courseRun { bookings { courseRun { bookings { courseRun { bookings { courseRun { bookings { id } } } } } } } } } }`;
    const { status, body } = await api.graphql(deep);
    expect(status).toBe(400);
    expect(body.errors?.[0]?.message).toContain('exceeds maximum operation depth of 8');
  });

  it('refuses a body over 100 kB with 413', async () => {
    const response = await fetch(`${api.server.internalUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${INTERNAL_TOKEN}` },
      body: JSON.stringify({ query: `{ __typename }${' '.repeat(110_000)}` }),
    });
    expect(response.status).toBe(413);
  });
});
