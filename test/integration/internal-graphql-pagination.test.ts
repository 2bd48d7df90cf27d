import { buildClientSchema, getIntrospectionQuery, type GraphQLInputObjectType, type GraphQLObjectType, type IntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { ResourceRegistry, type RelationDefinition } from '../../src/db/resource-registry.ts';
import { resources } from '../../src/db/resources.ts';
import { importFixture, type ImportResult } from '../../src/fixtures/import-fixture.ts';
import { loadTypeDefs } from '../../src/graphql/schema.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type GraphQLResponse, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const STATUSES = ['pending', 'confirmed', 'waitlisted', 'cancelled', 'expired'] as const;
const SOURCES = ['admin', 'public_page', 'widget', 'api'] as const;

/**
 * A workspace of `count` bookings over two runs. Three bookings share each creation minute, so
 * that ties broken by id fall across page boundaries.
 */
function bookingsFixture(name: string, count: number) {
  const iso = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 0, minutes)).toISOString();
  return {
    workspace: { name },
    members: [],
    courseTemplates: [{ ref: 't', title: `${name} course`, description: 'About it.' }],
    courseRuns: ['r0', 'r1'].map((ref, index) => ({
      ref,
      template: 't',
      status: 'published',
      sessions: [{ ref: `${ref}s`, startsAt: iso(10_000 + index), durationMinutes: 60, timeZone: 'UTC', location: 'Room', status: 'scheduled' }],
    })),
    bookings: Array.from({ length: count }, (_, i) => ({
      ref: `b${i}`,
      courseRun: `r${i % 2}`,
      source: SOURCES[i % SOURCES.length]!,
      status: STATUSES[i % STATUSES.length]!,
      createdAt: iso(Math.floor(i / 3)),
      updatedAt: iso(Math.floor(i / 3)),
      ...(i % 4 === 0 ? {} : { participant: { name: `Person ${i}`, email: `p${i}@paging.example` } }),
    })),
  };
}

interface Page {
  edges: Array<{ cursor: string; node: { id: string } }>;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount?: number;
}

const PAGE = /* GraphQL */ `
  query Page($id: ID!, $first: Int, $after: String, $last: Int, $before: String, $filter: BookingFilter) {
    workspace(id: $id) {
      bookingsConnection(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
        edges { cursor node { id } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        totalCount
      }
    }
  }
`;

describeOnEachDatabase('internal GraphQL connections on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let big: ImportResult;
  /** Every booking id of the big workspace in the documented order: createdAt descending, then id descending. */
  let expected: string[];

  const page = async (variables: Record<string, unknown>): Promise<Page> => {
    const { status, body } = await api.graphql(PAGE, { id: big.workspaceId, ...variables });
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    return (body.data as { workspace: { bookingsConnection: Page } }).workspace.bookingsConnection;
  };

  const idsInOrder = async (workspaceId: string, where = 'true', values: unknown[] = []) =>
    (
      await db.query<{ id: string }>(`SELECT id FROM bookings WHERE workspace_id = $1 AND ${where} ORDER BY created_at DESC, id DESC`, [workspaceId, ...values])
    ).rows.map((row) => row.id);

  beforeAll(async () => {
    db = await openTestDatabase(target);
    big = await importFixture(db, bookingsFixture('Paging', 1234), {});
    // Some bookings a few microseconds after their minute: in milliseconds they tie with the others
    // of that minute, so a cursor that kept only milliseconds would skip or repeat them.
    await db.query(
      `UPDATE bookings SET created_at = created_at + interval '123 microseconds', updated_at = updated_at + interval '123 microseconds'
        WHERE id IN (SELECT id FROM bookings WHERE workspace_id = $1 ORDER BY id LIMIT 300)`,
      [big.workspaceId],
    );
    expected = await idsInOrder(big.workspaceId);
    api = await startTestApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('paging forward with first: 50 through 1,234 bookings returns each exactly once, in order', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const current: Page = await page({ first: 50, after });
      pages += 1;
      seen.push(...current.edges.map((edge) => edge.node.id));
      expect(current.totalCount).toBe(1234);
      expect(current.pageInfo.endCursor).toBe(current.edges.at(-1)!.cursor);
      if (!current.pageInfo.hasNextPage) break;
      expect(current.edges).toHaveLength(50);
      after = current.pageInfo.endCursor;
    }
    expect(pages).toBe(25);
    expect(seen).toEqual(expected);
  });

  it('paging backward with last: 50 and before returns each exactly once, in order', async () => {
    const pages: string[][] = [];
    let before: string | null = null;
    for (;;) {
      const current: Page = await page({ last: 50, before });
      pages.unshift(current.edges.map((edge) => edge.node.id));
      expect(current.pageInfo.startCursor).toBe(current.edges[0]!.cursor);
      if (!current.pageInfo.hasPreviousPage) break;
      expect(current.edges).toHaveLength(50);
      before = current.pageInfo.startCursor;
    }
    expect(pages).toHaveLength(25);
    expect(pages.flat()).toEqual(expected);
  });

  it('after and before together read the rows between two cursors', async () => {
    const first = await page({ first: 100 });
    const between = await page({ first: 100, after: first.edges[9]!.cursor, before: first.edges[20]!.cursor });
    expect(between.edges.map((edge) => edge.node.id)).toEqual(expected.slice(10, 20));
    expect(between.pageInfo.hasNextPage).toBe(false);
  });

  it('filters combine with pagination: a date range and statuses, paged with first: 50, match the same filter in SQL', async () => {
    const filter = { createdAt: { gte: '2026-01-01T01:00:00.000Z', lt: '2026-01-01T05:00:00Z' }, status: { in: ['CONFIRMED', 'PENDING'] } };
    const want = await idsInOrder(big.workspaceId, `created_at >= $2 AND created_at < $3 AND status = ANY($4)`, [
      '2026-01-01T01:00:00.000Z',
      '2026-01-01T05:00:00Z',
      ['confirmed', 'pending'],
    ]);
    expect(want.length).toBeGreaterThan(50);
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const current: Page = await page({ first: 50, after, filter });
      expect(current.totalCount).toBe(want.length);
      seen.push(...current.edges.map((edge) => edge.node.id));
      if (!current.pageInfo.hasNextPage) break;
      after = current.pageInfo.endCursor;
    }
    expect(seen).toEqual(want);
  });

  it('filters by equality, id sets, sources and open ranges', async () => {
    const some = expected.slice(3, 7);
    const byIds = await page({ filter: { id: { in: some } } });
    expect(byIds.edges.map((edge) => edge.node.id)).toEqual(some);
    const one = await page({ filter: { id: { eq: expected[5] } } });
    expect(one.edges.map((edge) => edge.node.id)).toEqual([expected[5]]);
    const widget = await page({ first: 100, filter: { source: { in: ['WIDGET'] }, createdAt: { lte: '2026-01-01T00:10:00Z' } } });
    expect(widget.edges.map((edge) => edge.node.id)).toEqual(await idsInOrder(big.workspaceId, `source = 'widget' AND created_at <= '2026-01-01T00:10:00Z'`));
    const none = await page({ filter: { status: { in: [] } } });
    expect(none).toMatchObject({ edges: [], totalCount: 0, pageInfo: { hasNextPage: false, startCursor: null, endCursor: null } });
  });

  it('nested connections, filters and totalCount send the same number of statements for 10 and for 1,000 bookings', async () => {
    const small = await importFixture(db, bookingsFixture('Ten', 10), {});
    const large = await importFixture(db, bookingsFixture('Thousand', 1000), {});
    const query = /* GraphQL */ `
      query Nested($id: ID!, $after: String) {
        workspace(id: $id) {
          courseRunsConnection(first: 10) {
            totalCount
            edges {
              cursor
              node {
                template { title }
                sessionsConnection(first: 5) { nodes { startsAt } }
                bookingsConnection(first: 20, after: $after, filter: { status: { in: [CONFIRMED, PENDING, WAITLISTED] } }) {
                  totalCount
                  pageInfo { hasNextPage endCursor }
                  edges { cursor node { id status courseRun { id } participant { email } } }
                }
              }
            }
          }
          bookingsConnection(first: 50, filter: { createdAt: { gte: "2026-01-01T00:00:00Z" } }) { totalCount nodes { id courseRun { id } } }
        }
      }
    `;
    const run = async (workspaceId: string) => {
      let result: { status: number; body: GraphQLResponse } | undefined;
      const statements = await captureStatements(db, async () => {
        result = await api.graphql(query, { id: workspaceId });
      });
      expect(result!.body.errors).toBeUndefined();
      return { statements, data: result!.body.data as { workspace: { bookingsConnection: { totalCount: number; nodes: unknown[] } } } };
    };
    const ten = await run(small.workspaceId);
    const thousand = await run(large.workspaceId);
    expect(ten.data.workspace.bookingsConnection).toMatchObject({ totalCount: 10 });
    expect(thousand.data.workspace.bookingsConnection.nodes).toHaveLength(50);
    expect(thousand.data.workspace.bookingsConnection.totalCount).toBe(1000);
    // The workspace; its runs with their templates; their count; sessions; the runs' bookings with
    // their participants; their count; the workspace's bookings; their count.
    expect(ten.statements).toHaveLength(8);
    expect(thousand.statements).toHaveLength(ten.statements.length);
    expect(thousand.statements.some((text) => /\bOFFSET\b/i.test(text))).toBe(false);
  });

  it('the second and the twentieth page cost the same statements: keyset pages, never OFFSET', async () => {
    const firstPage = await page({ first: 50 });
    const deep = await page({ first: 50, after: (await page({ first: 100, after: firstPage.pageInfo.endCursor })).pageInfo.endCursor });
    const second = await captureStatements(db, () => page({ first: 50, after: firstPage.pageInfo.endCursor }));
    const later = await captureStatements(db, () => page({ first: 50, after: deep.pageInfo.endCursor }));
    expect(later).toEqual(second);
    expect(second.join('\n')).toMatch(/\(t\.created_at, t\.id\) < \(/);
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

  it('pages an order of mixed directions over a nullable column, NULLs where ORDER BY puts them, forward and backward', async () => {
    await db.query(`CREATE TABLE gizmos (id text PRIMARY KEY, workspace_id text NOT NULL REFERENCES workspaces (id), rank integer, label text NOT NULL)`);
    const rows = Array.from({ length: 41 }, (_, i) => [`gz_${String(i).padStart(2, '0')}`, i % 3 === 0 ? null : i % 5, `label ${i % 4}`]);
    await db.query(
      `INSERT INTO gizmos SELECT id, $1, rank, label FROM unnest($2::text[], $3::int[], $4::text[]) AS u(id, rank, label)`,
      [big.workspaceId, rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2])],
    );
    const gizmos: RelationDefinition = {
      resource: 'Gizmo',
      kind: 'many',
      localField: 'id',
      foreignField: 'workspaceId',
      orderBy: [{ field: 'rank' }, { field: 'label', direction: 'desc' }],
    };
    const registry = new ResourceRegistry([
      ...resources.map((resource) => (resource.name === 'Workspace' ? { ...resource, relations: { ...resource.relations, gizmos } } : resource)),
      {
        name: 'Gizmo',
        table: 'gizmos',
        key: 'id',
        fields: { id: { column: 'id', type: 'id' }, workspaceId: 'workspace_id', rank: { column: 'rank', type: 'int', nullable: true }, label: 'label' },
        workspaceField: 'workspaceId',
        roots: { gizmo: { argument: 'id' } },
      },
    ]);
    registry.validate();
    const typeDefs = [...loadTypeDefs(), `type Gizmo { id: ID! rank: Int label: String! } extend type Query { gizmo(id: ID!): Gizmo }`];
    const extended = await startTestApi(db, {}, { registry, typeDefs });
    try {
      const want = (await db.query<{ id: string }>('SELECT id FROM gizmos ORDER BY rank ASC, label DESC, id DESC')).rows.map((row) => row.id);
      type Gizmos = { nodes: Array<{ id: string }>; pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string; startCursor: string } };
      const read = async (variables: Record<string, unknown>) => {
        const answer = await extended.graphql(
          `query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) { workspace(id: $id) { gizmosConnection(first: $first, after: $after, last: $last, before: $before) { nodes { id } pageInfo { hasNextPage hasPreviousPage endCursor startCursor } } } }`,
          { id: big.workspaceId, ...variables },
        );
        expect(answer.body.errors).toBeUndefined();
        return (answer.body.data as { workspace: { gizmosConnection: Gizmos } }).workspace.gizmosConnection;
      };
      const forward: string[] = [];
      for (let after: string | null = null; ; ) {
        const current: Gizmos = await read({ first: 4, after });
        forward.push(...current.nodes.map((node) => node.id));
        if (!current.pageInfo.hasNextPage) break;
        after = current.pageInfo.endCursor;
      }
      expect(forward).toEqual(want);
      const backward: string[] = [];
      for (let before: string | null = null; ; ) {
        const current: Gizmos = await read({ last: 4, before });
        backward.unshift(...current.nodes.map((node) => node.id));
        if (!current.pageInfo.hasPreviousPage) break;
        before = current.pageInfo.startCursor;
      }
      expect(backward).toEqual(want);
      const filtered = await extended.graphql(`query($id: ID!) { workspace(id: $id) { gizmosConnection(filter: { rank: { in: [1, 2] } }) { totalCount } } }`, { id: big.workspaceId });
      expect(filtered.body.data).toEqual({ workspace: { gizmosConnection: { totalCount: rows.filter((row) => row[1] === 1 || row[1] === 2).length } } });
    } finally {
      await extended.close();
    }
  });

  it.each([
    ['first: 0', { first: 0 }, 'Argument "first" must be an integer from 1 to 100.'],
    ['first: 101', { first: 101 }, 'Argument "first" must be an integer from 1 to 100.'],
    ['last: 101', { last: 101 }, 'Argument "last" must be an integer from 1 to 100.'],
    ['first and last', { first: 5, last: 5 }, 'Give "first" or "last", not both'],
  ])('refuses %s with invalid_request before any statement', async (_name, variables, message) => {
    let response: { status: number; body: GraphQLResponse } | undefined;
    const statements = await captureStatements(db, async () => {
      response = await api.graphql(PAGE, { id: big.workspaceId, ...variables });
    });
    expect(response!.status).toBe(400);
    expect(response!.body.errors).toHaveLength(1);
    expect(response!.body.errors![0]!.extensions?.code).toBe('invalid_request');
    expect(response!.body.errors![0]!.message).toContain(message);
    expect(statements).toEqual([]);
  });

  it('refuses a tampered, truncated, foreign or made-up cursor with invalid_request, never a 500', async () => {
    const { pageInfo } = await page({ first: 3 });
    const cursor = pageInfo.endCursor!;
    const decoded = Buffer.from(cursor, 'base64url').toString('utf8');
    // The same cursor with a later minute written in: well-formed JSON, but not what the list gave out.
    const edited = Buffer.from(decoded.replace(/ 0(\d):/, (_match, digit: string) => ` 0${(Number(digit) + 1) % 10}:`), 'utf8').toString('base64url');
    expect(edited).not.toBe(cursor);
    const runCursor = (await api.graphql(`query($id: ID!) { workspace(id: $id) { courseRunsConnection(first: 1) { pageInfo { endCursor } } } }`, { id: big.workspaceId })).body
      .data as { workspace: { courseRunsConnection: { pageInfo: { endCursor: string } } } };
    for (const bad of [
      edited,
      `${cursor.slice(0, 10)}x${cursor.slice(11)}`,
      cursor.slice(0, -4),
      runCursor.workspace.courseRunsConnection.pageInfo.endCursor,
      'not a cursor',
      Buffer.from('["Workspace.bookings",["x"]]').toString('base64url'),
      '',
    ]) {
      for (const argument of ['after', 'before']) {
        const response = await api.graphql(PAGE, { id: big.workspaceId, [argument]: bad });
        expect(response.status, `${argument} ${bad}`).toBe(400);
        expect(response.body.errors?.[0]).toMatchObject({
          message: `Argument "${argument}" is not a cursor of this list; use a cursor this list returned.`,
          extensions: { code: 'invalid_request' },
        });
      }
    }
  });

  it('refuses a list without a page size and names the connection to use instead', async () => {
    const response = await api.graphql(`query($id: ID!) { workspace(id: $id) { courses { id sessions { id } } } }`, { id: big.workspaceId });
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]).toMatchObject({
      message: 'Field "Workspace.courses" returns every row at once, which this endpoint refuses: page through "coursesConnection" with first/after instead.',
      extensions: { code: 'invalid_request' },
    });
  });

  it('counts each list at its real page size: pages that multiply past 20,000 are refused, smaller pages pass', async () => {
    const nested = (outer: number, inner: number) =>
      `query($id: ID!) { workspace(id: $id) { bookingsConnection(first: ${outer}) { nodes { courseRun { bookingsConnection(first: ${inner}) { nodes { id status } } } } } } }`;
    const refused = await api.graphql(nested(100, 100), { id: big.workspaceId });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.message).toMatch(/^Query cost \d+ exceeds the limit of 20000; select fewer fields or lower "first"\.$/);
    const cost = Number(/Query cost (\d+)/.exec(refused.body.errors![0]!.message)![1]);
    // 100 bookings × 100 bookings of their run × 2 fields at least: the rows it could return are in the estimate.
    expect(cost).toBeGreaterThanOrEqual(100 * 100 * 2);
    const allowed = await api.graphql(nested(20, 20), { id: big.workspaceId });
    expect(allowed.body.errors).toBeUndefined();
    // Without first, a connection counts as a full page of 100.
    const unsized = await api.graphql(
      `query($id: ID!) { workspace(id: $id) { bookingsConnection { nodes { courseRun { bookingsConnection { nodes { id status } } } } } } }`,
      { id: big.workspaceId },
    );
    expect(unsized.body.errors?.[0]?.message).toMatch(/^Query cost \d+ exceeds/);
  });

  it('answers introspection, so that client generators read the generated connections and filters', async () => {
    const { status, body } = await api.graphql(getIntrospectionQuery());
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    const schema = buildClientSchema(body.data as unknown as IntrospectionQuery);
    const workspace = schema.getType('Workspace') as GraphQLObjectType;
    expect(Object.keys(workspace.getFields())).toEqual(expect.arrayContaining(['coursesConnection', 'courseRunsConnection', 'courseTemplatesConnection', 'bookingsConnection']));
    const filter = schema.getType('BookingFilter') as GraphQLInputObjectType;
    expect(Object.keys(filter.getFields())).toEqual(['id', 'courseRunId', 'source', 'status', 'createdAt', 'updatedAt']);
    expect(Object.keys((schema.getType('DateTimeFilter') as GraphQLInputObjectType).getFields())).toEqual(['eq', 'gt', 'gte', 'lt', 'lte']);
    expect(Object.keys((schema.getType('BookingStatusFilter') as GraphQLInputObjectType).getFields())).toEqual(['eq', 'in']);
  });

  it('refuses a DateTime filter value without a zone with a clear error', async () => {
    const response = await api.graphql(PAGE, { id: big.workspaceId, filter: { createdAt: { gte: '2026-01-01 10:00' } } });
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.message).toContain('DateTime must be an ISO 8601 instant with Z or an offset');
  });
});
