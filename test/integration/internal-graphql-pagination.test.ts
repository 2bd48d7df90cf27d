import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { readCatalog } from '../../src/model/catalog.ts';
import { overlay } from '../../src/model/overlay.ts';
import { deriveModel } from '../../src/model/resource-model.ts';
import { importFixture, type ImportResult } from '../../src/fixtures/import-fixture.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type GraphQLResponse, type TestApi } from '../support/public-api.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';
import { PAGE, bookingsFixture, type Page } from '../support/paging-fixture.ts';

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

  it('a workspace and the one page selected under it are read in one statement: its rows, an empty page, and null for no such workspace', async () => {
    const empty = await importFixture(db, bookingsFixture('Empty', 0), {});
    const query = `query($id: ID!) { workspace(id: $id) { id bookingsConnection(first: 20) { pageInfo { hasNextPage } nodes { id participant { name } } } } }`;
    const read = async (id: string) => {
      let result: { status: number; body: GraphQLResponse } | undefined;
      const statements = await captureStatements(db, async () => {
        result = await api.graphql(query, { id });
      });
      expect(result!.body.errors).toBeUndefined();
      return { statements, workspace: (result!.body.data as { workspace: { id: string; bookingsConnection: { pageInfo: { hasNextPage: boolean }; nodes: Array<{ id: string }> } } | null }).workspace };
    };
    const full = await read(big.workspaceId);
    expect(full.statements).toHaveLength(1);
    expect(full.workspace!.bookingsConnection.nodes.map((node) => node.id)).toEqual(expected.slice(0, 20));
    expect(full.workspace!.bookingsConnection.pageInfo.hasNextPage).toBe(true);
    const none = await read(empty.workspaceId);
    expect(none.statements).toHaveLength(1);
    expect(none.workspace).toEqual({ id: empty.workspaceId, bookingsConnection: { pageInfo: { hasNextPage: false }, nodes: [] } });
    const missing = await read('ws_00000000000000000000000000000000');
    expect(missing.statements).toHaveLength(1);
    expect(missing.workspace).toBeNull();
  });

  it('a page without cursors lists the same rows without reading the values cursors are made of; a cursor asked through a fragment still pages', async () => {
    const bookingsOf = (statements: string[]) => statements.filter((text) => /FROM bookings/.test(text) && /LATERAL/.test(text));
    let plain: { status: number; body: GraphQLResponse } | undefined;
    const withoutCursors = await captureStatements(db, async () => {
      plain = await api.graphql(`query($id: ID!) { workspace(id: $id) { bookingsConnection(first: 50) { nodes { id } } } }`, { id: big.workspaceId });
    });
    expect(plain!.body.errors).toBeUndefined();
    const nodes = (plain!.body.data as { workspace: { bookingsConnection: { nodes: Array<{ id: string }> } } }).workspace.bookingsConnection.nodes;
    expect(nodes.map((node) => node.id)).toEqual(expected.slice(0, 50));
    expect(bookingsOf(withoutCursors)).toHaveLength(1);
    expect(bookingsOf(withoutCursors)[0]).not.toMatch(/"__o0"/);

    let fragment: { status: number; body: GraphQLResponse } | undefined;
    const withCursor = await captureStatements(db, async () => {
      fragment = await api.graphql(
        `query($id: ID!) { workspace(id: $id) { bookingsConnection(first: 50) { nodes { id } ...End } } } fragment End on BookingConnection { pageInfo { endCursor } }`,
        { id: big.workspaceId },
      );
    });
    expect(fragment!.body.errors).toBeUndefined();
    expect(bookingsOf(withCursor)[0]).toMatch(/"__o0"/);
    const endCursor = (fragment!.body.data as { workspace: { bookingsConnection: { pageInfo: { endCursor: string } } } }).workspace.bookingsConnection.pageInfo.endCursor;
    expect((await page({ first: 50, after: endCursor })).edges.map((edge) => edge.node.id)).toEqual(expected.slice(50, 100));
  });

  it('the second and the twentieth page cost the same statements: keyset pages, never OFFSET', async () => {
    const firstPage = await page({ first: 50 });
    const deep = await page({ first: 50, after: (await page({ first: 100, after: firstPage.pageInfo.endCursor })).pageInfo.endCursor });
    const second = await captureStatements(db, () => page({ first: 50, after: firstPage.pageInfo.endCursor }));
    const later = await captureStatements(db, () => page({ first: 50, after: deep.pageInfo.endCursor }));
    expect(later).toEqual(second);
    expect(second.join('\n')).toMatch(/\(t\.created_at, t\.id\) < \(/);
  });

  it('pages an order of mixed directions over a nullable column, NULLs where ORDER BY puts them, forward and backward', async () => {
    await db.query(`CREATE TABLE gizmos (id text PRIMARY KEY, workspace_id text NOT NULL REFERENCES workspaces (id), rank integer, label text NOT NULL)`);
    const rows = Array.from({ length: 41 }, (_, i) => [`gz_${String(i).padStart(2, '0')}`, i % 3 === 0 ? null : i % 5, `label ${i % 4}`]);
    await db.query(
      `INSERT INTO gizmos SELECT id, $1, rank, label FROM unnest($2::text[], $3::int[], $4::text[]) AS u(id, rank, label)`,
      [big.workspaceId, rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2])],
    );
    const model = deriveModel(await readCatalog(db), { ...overlay, gizmos: { order: ['rank', '-label'] } });
    const extended = await startTestApi(db, {}, { model });
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
});
