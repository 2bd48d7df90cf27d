import { buildClientSchema, getIntrospectionQuery, getNullableType, isListType, isObjectType, type GraphQLInputObjectType, type GraphQLObjectType, type IntrospectionQuery } from 'graphql';
import { beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { importFixture, type ImportResult } from '../../src/fixtures/import-fixture.ts';
import { INTEGRATION_LIST_BOUNDS } from '../../src/integrations/graphql-sdl.ts';
import { PAGE, bookingsFixture, type Page } from '../support/paging-fixture.ts';
import { type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

describeOnEachDatabase('internal GraphQL connections refuse what they cannot page, on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let big: ImportResult;

  const page = async (variables: Record<string, unknown>): Promise<Page> => {
    const { status, body } = await api.graphql(PAGE, { id: big.workspaceId, ...variables });
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    return (body.data as { workspace: { bookingsConnection: Page } }).workspace.bookingsConnection;
  };

  beforeAll(async () => {
    ({ db, api } = await sharedTestApi(target));
    big = await importFixture(db, bookingsFixture('Refusals', 30), {});
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

  it('serves no list without a page size: every list of every type is a connection page or a list of the integrations area with its bound, and a whole list is not a field', async () => {
    const { body } = await api.graphql(getIntrospectionQuery());
    const schema = buildClientSchema(body.data as unknown as IntrospectionQuery);
    const lists: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__') || !isObjectType(type)) continue;
      for (const field of Object.values(type.getFields())) {
        if (isListType(getNullableType(field.type)) && !type.name.endsWith('Connection')) lists.push(`${type.name}.${field.name}`);
      }
    }
    // The area's lists of rows are bounded for the cost estimate; its lists of values are bounded by their rules (3 scopes, 2 event types, 100 networks).
    const values = /\.(scopes|events|allowedIps)$/;
    expect(lists.filter((list) => !values.test(list)).sort()).toEqual([...INTEGRATION_LIST_BOUNDS.keys()].sort());
    expect(lists.filter((list) => values.test(list)).every((list) => list.startsWith('Integration') || /^(Created|Updated)/.test(list))).toBe(true);
    const response = await api.graphql(`query($id: ID!) { workspace(id: $id) { courses { id sessions { id } } } }`, { id: big.workspaceId });
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]).toMatchObject({ message: 'Cannot query field "courses" on type "Workspace".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });

  it('sizes each list at its real page size: pages that multiply past 20,000 fields are refused, smaller pages pass', async () => {
    const nested = (outer: number, inner: number) =>
      `query($id: ID!) { workspace(id: $id) { bookingsConnection(first: ${outer}) { nodes { courseRun { bookingsConnection(first: ${inner}) { nodes { id status } } } } } } }`;
    const refused = await api.graphql(nested(100, 100), { id: big.workspaceId });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.message).toMatch(/^Query size \d+ exceeds the limit of 20000; select fewer fields or lower "first"\.$/);
    const size = Number(/Query size (\d+)/.exec(refused.body.errors![0]!.message)![1]);
    // 100 bookings × 100 bookings of their run × 2 fields at least: the rows it could return are in the estimate.
    expect(size).toBeGreaterThanOrEqual(100 * 100 * 2);
    const allowed = await api.graphql(nested(20, 20), { id: big.workspaceId });
    expect(allowed.body.errors).toBeUndefined();
    // Without first, a connection sizes as a full page of 100.
    const unsized = await api.graphql(
      `query($id: ID!) { workspace(id: $id) { bookingsConnection { nodes { courseRun { bookingsConnection { nodes { id status } } } } } } }`,
      { id: big.workspaceId },
    );
    expect(unsized.body.errors?.[0]?.message).toMatch(/^Query size \d+ exceeds/);
  });

  it('answers introspection, so that client generators read the generated connections and filters', async () => {
    const { status, body } = await api.graphql(getIntrospectionQuery());
    expect(body.errors).toBeUndefined();
    expect(status).toBe(200);
    const schema = buildClientSchema(body.data as unknown as IntrospectionQuery);
    const workspace = schema.getType('Workspace') as GraphQLObjectType;
    expect(Object.keys(workspace.getFields())).toEqual(expect.arrayContaining(['coursesConnection', 'courseRunsConnection', 'courseTemplatesConnection', 'bookingsConnection']));
    const filter = schema.getType('BookingFilter') as GraphQLInputObjectType;
    expect(Object.keys(filter.getFields())).toEqual(['id', 'workspaceId', 'courseRunId', 'source', 'status', 'createdAt', 'updatedAt']);
    expect(Object.keys((schema.getType('DateTimeFilter') as GraphQLInputObjectType).getFields())).toEqual(['eq', 'gt', 'gte', 'lt', 'lte']);
    expect(Object.keys((schema.getType('BookingStatusFilter') as GraphQLInputObjectType).getFields())).toEqual(['eq', 'in']);
  });

  it('refuses a DateTime filter value without a zone with a clear error', async () => {
    const response = await api.graphql(PAGE, { id: big.workspaceId, filter: { createdAt: { gte: '2026-01-01 10:00' } } });
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.message).toContain('DateTime must be an ISO 8601 instant with Z or an offset');
  });
});
