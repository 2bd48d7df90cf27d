import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { readCatalog } from '../../src/model/catalog.ts';
import { overlay } from '../../src/model/overlay.ts';
import { deriveModel } from '../../src/model/resource-model.ts';
import { importFixture } from '../../src/fixtures/import-fixture.ts';
import { openTestDatabase } from '../support/databases.ts';
import { captureStatements } from '../support/statements.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/** A workspace with `runs` published runs, each with 2 sessions and 2 bookings with participants. */
function sizedFixture(runs: number) {
  const iso = (minutes: number) => new Date(Date.UTC(2027, 0, 1, 0, minutes)).toISOString();
  return {
    workspace: { name: `Sized ${runs}` },
    members: [],
    courseTemplates: [{ ref: 't', title: 'Course', description: 'About it.' }],
    courseRuns: Array.from({ length: runs }, (_, r) => ({
      ref: `r${r}`,
      template: 't',
      status: 'published',
      sessions: [0, 1].map((s) => ({
        ref: `r${r}s${s}`,
        startsAt: iso(r * 2 + s),
        durationMinutes: 60,
        timeZone: 'Europe/Berlin',
        location: 'Room',
        status: 'scheduled',
      })),
    })),
    bookings: Array.from({ length: runs * 2 }, (_, b) => ({
      ref: `b${b}`,
      courseRun: `r${b % runs}`,
      source: 'widget',
      status: 'confirmed',
      createdAt: iso(b),
      updatedAt: iso(b),
      participant: { name: `P ${b}`, email: `p${b}@sized.example` },
    })),
  };
}

// Each relation appears at one depth only: a loader used at two depths would hit its cache more
// often on small data, which would compare caching rather than batching.
const NESTED_QUERY = /* GraphQL */ `
  query Everything($id: ID!) {
    workspace(id: $id) {
      name
      coursesConnection(first: 100) {
        nodes { id template { title } sessionsConnection(first: 10) { nodes { id startsAt courseRun { id } } } bookingsConnection(first: 5) { nodes { id participant { email } } } }
      }
      bookingsConnection(first: 100) { nodes { id source courseRun { id status } } }
    }
  }
`;

describeOnEachDatabase('internal GraphQL on %s', (target) => {
  let db: Database;
  let api: TestApi;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    api = await startTestApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  const countStatements = async (work: () => Promise<unknown>) => (await captureStatements(db, work)).length;

  it('batches every relation: the same query over 3 course runs and over 300 (a page of 100) sends the same number of statements', async () => {
    const small = await importFixture(db, sizedFixture(3), {});
    const large = await importFixture(db, sizedFixture(300), {});
    let smallResult: unknown;
    let largeResult: unknown;
    const smallCount = await countStatements(async () => {
      smallResult = await api.graphql(NESTED_QUERY, { id: small.workspaceId });
    });
    const largeCount = await countStatements(async () => {
      largeResult = await api.graphql(NESTED_QUERY, { id: large.workspaceId });
    });
    type Body = { body: { data: { workspace: { coursesConnection: { nodes: unknown[] }; bookingsConnection: { nodes: unknown[] } } } } };
    const smallBody = (smallResult as Body).body;
    const largeBody = (largeResult as Body).body;
    expect(smallBody.data.workspace.coursesConnection.nodes).toHaveLength(3);
    expect(largeBody.data.workspace.coursesConnection.nodes).toHaveLength(100);
    expect(largeBody.data.workspace.bookingsConnection.nodes).toHaveLength(100);
    expect(smallCount).toBeGreaterThan(0);
    expect(largeCount).toBe(smallCount);
  });

  it('reads a selected one-relation that matches its target key in the statement of its parents, only when it is selected', async () => {
    const ws = await importFixture(db, sizedFixture(3), {});
    await db.query('DELETE FROM participants WHERE booking_id = $1', [ws.ids.b0]);
    const query = (selection: string) => api.graphql(`query($id: ID!) { workspace(id: $id) { bookingsConnection(first: 100) { nodes { id ${selection} } } } }`, { id: ws.workspaceId });
    let withParticipant: Awaited<ReturnType<typeof query>> | undefined;
    const joined = await captureStatements(db, async () => {
      withParticipant = await query('participant { name } courseRun { id template { title } }');
    });
    const bookings = (withParticipant!.body.data as { workspace: { bookingsConnection: { nodes: Array<{ id: string; participant: { name: string } | null; courseRun: { template: { title: string } } }> } } }).workspace
      .bookingsConnection.nodes;
    expect(bookings).toHaveLength(6);
    expect(bookings.find((booking) => booking.id === ws.ids.b0)!.participant).toBeNull();
    expect(bookings.find((booking) => booking.id === ws.ids.b1)!.participant).toEqual({ name: 'P 1' });
    expect(bookings.every((booking) => booking.courseRun.template.title === 'Course')).toBe(true);
    // The workspace with its bookings, their participants and runs (one statement); the runs' templates.
    expect(joined).toHaveLength(2);
    expect(joined[0]).toMatch(/FROM workspaces l LEFT JOIN LATERAL \(SELECT .* FROM bookings t LEFT JOIN /);
    expect(joined[0]).toMatch(/LEFT JOIN participants /);
    expect(joined[0]).toMatch(/LEFT JOIN course_runs /);
    expect(joined[1]).toMatch(/FROM course_templates t /);
    const plain = await captureStatements(db, () => query(''));
    expect(plain.some((text) => /participants|course_runs|course_templates/.test(text))).toBe(false);
  });

  it('reads the columns the query selects and a relation\'s own column only when the relation is selected (a large list holds nothing it does not answer)', async () => {
    const ws = await importFixture(db, sizedFixture(2), {});
    const sessionsOf = (selection: string) =>
      captureStatements(db, () => api.graphql(`query($id: ID!) { workspace(id: $id) { sessionsConnection(first: 10) { nodes { id ${selection} } } } }`, { id: ws.workspaceId }));
    const sessionStatement = (statements: string[]) => statements.find((text) => /FROM sessions t/.test(text))!;
    const plain = sessionStatement(await sessionsOf('startsAt'));
    expect(plain).toMatch(/"startsAt"/);
    expect(plain).not.toMatch(/AS "workspaceId"|AS "courseRunId"|AS "location"/);
    const withRun = sessionStatement(await sessionsOf('startsAt courseRun { id }'));
    expect(withRun).toMatch(/AS "courseRunId"|AS "courseRun\.id"/);
    expect(withRun).not.toMatch(/t\.workspace_id AS "workspaceId"/);
    const withWorkspace = await sessionsOf('workspace { id }');
    expect(sessionStatement(withWorkspace)).toMatch(/AS "workspaceId"|AS "workspace\.id"/);
  });

  it('a table the product does not have is served from its migration and an overlay entry alone, nested relation included', async () => {
    // The migration of the new resource; the test owns its tables.
    await db.query(`CREATE TABLE IF NOT EXISTS gadgets (id text PRIMARY KEY, workspace_id text NOT NULL REFERENCES workspaces (id), label text NOT NULL, weight_grams integer NOT NULL)`);
    await db.query(`CREATE TABLE IF NOT EXISTS gadget_parts (id text PRIMARY KEY, gadget_id text NOT NULL REFERENCES gadgets (id), part_name text NOT NULL, position integer NOT NULL)`);
    const ws = await importFixture(db, sizedFixture(1), {});
    await db.query(`INSERT INTO gadgets VALUES ('g1', $1, 'Lamp', 900), ('g2', $1, 'Fan', 1200)`, [ws.workspaceId]);
    await db.query(`INSERT INTO gadget_parts VALUES ('p1', 'g1', 'bulb', 2), ('p2', 'g1', 'switch', 1), ('p3', 'g2', 'blade', 1)`);

    const model = deriveModel(await readCatalog(db), {
      ...overlay,
      gadgets: { relations: { gadgetParts: 'parts' } },
      gadget_parts: { workspace: { through: 'gadget_id' }, root: false, rename: { part_name: 'name' }, order: ['position'] },
    });
    const extended = await startTestApi(db, {}, { model });
    try {
      const result = await extended.graphql(
        `{ lamp: gadget(id: "g1") { label weightGrams workspace { name } partsConnection(first: 10) { totalCount nodes { name position gadget { label } } } }
           fan: gadget(id: "g2") { label partsConnection { nodes { name } } }
           none: gadget(id: "nope") { label } }`,
      );
      expect(result.body.errors).toBeUndefined();
      expect(result.body.data).toEqual({
        lamp: {
          label: 'Lamp',
          weightGrams: 900,
          workspace: { name: 'Sized 1' },
          partsConnection: {
            totalCount: 2,
            nodes: [
              { name: 'switch', position: 1, gadget: { label: 'Lamp' } },
              { name: 'bulb', position: 2, gadget: { label: 'Lamp' } },
            ],
          },
        },
        fan: { label: 'Fan', partsConnection: { nodes: [{ name: 'blade' }] } },
        none: null,
      });
    } finally {
      await extended.close();
    }
  });

  it('the public fixed operations and internal queries share the schema: enums read in GraphQL style', async () => {
    const ws = await importFixture(db, sizedFixture(2), {});
    const result = await api.graphql(
      `query($id: ID!) { workspace(id: $id) { courseRunsConnection(filter: { status: { in: [PUBLISHED] } }) { nodes { status } } bookingsConnection(first: 1, filter: { source: { eq: WIDGET } }) { nodes { source status createdAt } } } }`,
      { id: ws.workspaceId },
    );
    expect(result.body.data).toEqual({
      workspace: {
        courseRunsConnection: { nodes: [{ status: 'PUBLISHED' }, { status: 'PUBLISHED' }] },
        bookingsConnection: { nodes: [{ source: 'WIDGET', status: 'CONFIRMED', createdAt: '2027-01-01T00:03:00.000Z' }] },
      },
    });
  });

  it('refuses a request without the internal token', async () => {
    const missing = await fetch(`${api.server.internalUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(missing.status).toBe(401);
    const wrong = await api.graphql('{ __typename }', {}, 'not-the-token-at-all');
    expect(wrong.status).toBe(401);
    expect(wrong.body.errors?.[0]?.extensions?.code).toBe('invalid_api_key');
  });

  it('refuses a query nested too deep with a clear error, before running it', async () => {
    const deep = `{ booking(id: "x") { courseRun { bookingsConnection { nodes { courseRun { bookingsConnection { nodes { courseRun { bookingsConnection { nodes { courseRun { id } } } } } } } } } } } }`;
    const statements = await countStatements(async () => {
      const result = await api.graphql(deep);
      expect(result.status).toBe(400);
      expect(result.body.errors?.[0]).toMatchObject({ message: 'Query depth limit of 10 exceeded, found 12.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    });
    expect(statements).toBe(0);
  });

  it('refuses a query whose size is too large with a clear error, before running it', async () => {
    const costly = `{ workspace(id: "x") { bookingsConnection(first: 100) { nodes { courseRun { bookingsConnection(first: 100) { nodes { courseRun { bookingsConnection(first: 100) { nodes { id } } } } } } } } } }`;
    const statements = await countStatements(async () => {
      const result = await api.graphql(costly);
      expect(result.status).toBe(400);
      expect(result.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
      expect(result.body.errors?.[0]?.message).toMatch(/Query size \d+ exceeds the limit/);
    });
    expect(statements).toBe(0);
  });

  it('rejects an out-of-range first with invalid_request', async () => {
    const ws = await importFixture(db, sizedFixture(1), {});
    const bad = await api.graphql(`query($id: ID!) { workspace(id: $id) { bookingsConnection(first: 101) { nodes { id } } } }`, { id: ws.workspaceId });
    expect(bad.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
    expect(bad.body.errors?.[0]?.message).toBe('Argument "first" must be an integer from 1 to 100.');
  });

  it('masks unexpected errors: no SQL, no stack', async () => {
    const ws = await importFixture(db, sizedFixture(1), {});
    await db.query('ALTER TABLE participants RENAME COLUMN email TO email_moved');
    try {
      const result = await api.graphql(`query($id: ID!) { workspace(id: $id) { bookingsConnection(first: 1) { nodes { participant { email } } } } }`, { id: ws.workspaceId });
      expect(result.body.errors?.[0]).toMatchObject({ message: 'An unexpected error occurred.', extensions: { code: 'internal_error' } });
      expect(JSON.stringify(result.body)).not.toMatch(/email_moved|SELECT|stack|\.ts:/);
    } finally {
      await db.query('ALTER TABLE participants RENAME COLUMN email_moved TO email');
    }
  });

  it('coursesConnection, one run a page, lists exactly what /courses lists, in its order (an aggregate order with ties)', async () => {
    const ws = await seedWorkspace(db, contractFixture('Courses', 2));
    const listed = ((await api.call('/api/public/v1/courses', { key: ws.fullKey })).body as { data: Array<{ id: string }> }).data.map((course) => course.id);
    expect(listed.length).toBeGreaterThanOrEqual(3);
    const query = `query($id: ID!, $after: String, $last: Int, $before: String) { workspace(id: $id) { coursesConnection(first: ${'$'}{FIRST}, after: $after, last: $last, before: $before) { nodes { id } pageInfo { hasNextPage hasPreviousPage endCursor startCursor } } } }`;
    type Courses = { nodes: Array<{ id: string }>; pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string; startCursor: string } };
    const read = async (text: string, variables: Record<string, unknown>) =>
      ((await api.graphql(text, { id: ws.workspaceId, ...variables })).body.data as { workspace: { coursesConnection: Courses } }).workspace.coursesConnection;
    const forward: string[] = [];
    for (let after: string | null = null; ; ) {
      const current: Courses = await read(query.replace('${FIRST}', '1'), { after });
      forward.push(...current.nodes.map((node) => node.id));
      if (!current.pageInfo.hasNextPage) break;
      after = current.pageInfo.endCursor;
    }
    expect(forward).toEqual(listed);
    const backward: string[] = [];
    for (let before: string | null = null; ; ) {
      const current: Courses = await read(query.replace('first: ${FIRST}, ', ''), { last: 1, before });
      backward.unshift(...current.nodes.map((node) => node.id));
      if (!current.pageInfo.hasPreviousPage) break;
      before = current.pageInfo.startCursor;
    }
    expect(backward).toEqual(listed);
  });
});
