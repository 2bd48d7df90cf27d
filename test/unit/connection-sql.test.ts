import { describe, expect, it } from 'vitest';
import { ResourceRegistry, type RelationDefinition, type ResourceDefinition } from '../../src/model/resource-registry.ts';
import { frozenModel } from '../support/frozen-model.ts';
import { buildConnectionQuery, buildCountQuery, buildLookup, buildRelationQuery, connectionOrder } from '../../src/sql/sql-builder.ts';

const { registry } = frozenModel();
const resources = registry.all();
const relation = (resource: string, name: string) => registry.relation(registry.get(resource), name);
/** A connection's statement: each parent's page (`page`, its columns but `__parent` as text: `values`) as one JSON array of text arrays. */
const pages = (values: string[], page: string) =>
  `SELECT p.k AS "__parent", array_to_json(ARRAY(SELECT ARRAY[${values.join(', ')}] FROM (${page}) q))::text AS "__page" FROM unnest($1::text[]) AS p(k)`;

describe('connectionOrder', () => {
  it('is the documented order with the key already last: bookings newest first, ties by id descending', () => {
    expect(connectionOrder(registry, relation('Workspace', 'bookings'))).toEqual([
      { term: { field: 'createdAt', direction: 'desc' }, direction: 'desc', type: 'timestamp', nullable: false },
      { term: { field: 'id', direction: 'desc' }, direction: 'desc', type: 'id', nullable: false },
    ]);
  });

  it('a named list orders by its listing column, which its rows all have: never NULL in a cursor', () => {
    const courses = connectionOrder(registry, relation('Workspace', 'courses'));
    expect(courses.map(({ term, type, nullable }) => ({ field: term.field, type, nullable }))).toEqual([
      { field: 'listedFrom', type: 'timestamp', nullable: false },
      { field: 'id', type: 'id', nullable: false },
    ]);
    const everyRun: RelationDefinition = { ...relation('Workspace', 'courses'), present: undefined };
    expect(connectionOrder(registry, everyRun)[0]!.nullable).toBe(true);
  });

  it('adds the key when the order does not end in it, in the direction of the last term', () => {
    const byTitle: RelationDefinition = { resource: 'CourseTemplate', kind: 'many', localField: 'id', foreignField: 'workspaceId', orderBy: [{ field: 'title', direction: 'desc' }] };
    expect(connectionOrder(registry, byTitle).map(({ term }) => term)).toEqual([{ field: 'title', direction: 'desc' }, { field: 'id', direction: 'desc' }]);
    const unordered: RelationDefinition = { resource: 'CourseTemplate', kind: 'many', localField: 'id', foreignField: 'workspaceId' };
    expect(connectionOrder(registry, unordered).map(({ term }) => term)).toEqual([{ field: 'id', direction: 'asc' }]);
  });
});

describe('buildConnectionQuery', () => {
  const bookings = relation('Workspace', 'bookings');

  it('reads the first page of every parent in the connection order as one JSON array per parent, the order values as __o columns', () => {
    expect(buildConnectionQuery(registry, bookings, { fields: ['status'] })).toEqual({
      text: pages(
        ['q."id"', 'q."status"::text', 'q."__o0"', 'q."__o1"'],
        `SELECT t.id AS "id", t.status AS "status", (t.created_at AT TIME ZONE 'UTC')::text AS "__o0", t.id AS "__o1" FROM bookings t ` +
          `WHERE t.workspace_id = p.k ORDER BY t.created_at DESC, t.id DESC LIMIT $2`,
      ),
      columns: ['__parent', 'id', 'status', '__o0', '__o1'],
      timestamps: [],
      parameters: [{ from: 'limit' }],
      embeds: [],
      pageAs: 'json',
      fromText: {},
    });
  });

  it('starts after a cursor with one row comparison an index on the order serves, timestamps cast from UTC text', () => {
    const query = buildConnectionQuery(registry, bookings, { fields: [], after: [false, false] });
    expect(query.text).toBe(
      pages(
        ['q."id"', 'q."__o0"', 'q."__o1"'],
        `SELECT t.id AS "id", (t.created_at AT TIME ZONE 'UTC')::text AS "__o0", t.id AS "__o1" FROM bookings t WHERE t.workspace_id = p.k ` +
          `AND (t.created_at, t.id) < (($2::timestamp AT TIME ZONE 'UTC'), $3) ORDER BY t.created_at DESC, t.id DESC LIMIT $4`,
      ),
    );
    expect(query.parameters).toEqual([{ from: 'after', index: 0 }, { from: 'after', index: 1 }, { from: 'limit' }]);
    expect(query.text).not.toMatch(/OFFSET/i);
  });

  it('reads backward from a before cursor in the reversed order (the page is turned round afterwards)', () => {
    expect(buildConnectionQuery(registry, bookings, { fields: [], before: [false, false], backward: true }).text).toBe(
      pages(
        ['q."id"', 'q."__o0"', 'q."__o1"'],
        `SELECT t.id AS "id", (t.created_at AT TIME ZONE 'UTC')::text AS "__o0", t.id AS "__o1" FROM bookings t WHERE t.workspace_id = p.k ` +
          `AND (t.created_at, t.id) > (($2::timestamp AT TIME ZONE 'UTC'), $3) ORDER BY t.created_at ASC, t.id ASC LIMIT $4`,
      ),
    );
  });

  it('filters with the operators asked, timestamps cast with their zone, each value a parameter', () => {
    const query = buildConnectionQuery(registry, bookings, {
      fields: [],
      filter: [
        ['courseRunId', 'eq'],
        ['status', 'in'],
        ['createdAt', 'gte'],
        ['createdAt', 'lt'],
      ],
    });
    expect(query.text).toContain(
      `WHERE t.workspace_id = p.k AND t.course_run_id = $2 AND t.status = ANY($3) AND t.created_at >= $4::timestamptz AND t.created_at < $5::timestamptz ORDER BY`,
    );
    expect(query.parameters).toEqual([
      { from: 'filter', field: 'courseRunId', operator: 'eq' },
      { from: 'filter', field: 'status', operator: 'in' },
      { from: 'filter', field: 'createdAt', operator: 'gte' },
      { from: 'filter', field: 'createdAt', operator: 'lt' },
      { from: 'limit' },
    ]);
  });

  it('a named list reads the rows whose listing column is set, seeking its index from a cursor', () => {
    const query = buildConnectionQuery(registry, relation('Workspace', 'courses'), { fields: [], after: [false, false] });
    expect(query.text).toBe(
      pages(
        ['q."id"', 'q."__o0"', 'q."__o1"'],
        `SELECT t.id AS "id", (t.listed_from AT TIME ZONE 'UTC')::text AS "__o0", t.id AS "__o1" FROM course_runs t WHERE t.workspace_id = p.k AND t.listed_from IS NOT NULL ` +
          `AND (t.listed_from, t.id) > (($2::timestamp AT TIME ZONE 'UTC'), $3) ORDER BY t.listed_from ASC, t.id ASC LIMIT $4`,
      ),
    );
  });

  it('a page with a float column (numeric reads as text from the driver, as a number from JSON) comes back as a row per page row', () => {
    const owner: ResourceDefinition = { name: 'Owner', table: 'owners', key: 'id', fields: { id: 'id' } };
    const price: ResourceDefinition = { name: 'Price', table: 'prices', key: 'id', fields: { id: 'id', ownerId: 'owner_id', amount: { column: 'amount', type: 'float' } } };
    const prices: RelationDefinition = { resource: 'Price', kind: 'many', localField: 'id', foreignField: 'ownerId' };
    const query = buildConnectionQuery(new ResourceRegistry([owner, price]), prices, { fields: ['amount'], cursors: false });
    expect(query.text).toBe(
      `SELECT p.k AS "__parent", x.* FROM unnest($1::text[]) AS p(k) CROSS JOIN LATERAL ` +
        `(SELECT t.id AS "id", t.amount AS "amount" FROM prices t WHERE t.owner_id = p.k ORDER BY t.id ASC LIMIT $2) x`,
    );
    expect(query.pageAs).toBeUndefined();
  });

  describe('an order of mixed directions over a nullable column', () => {
    const thing: ResourceDefinition = {
      name: 'Thing',
      table: 'things',
      key: 'id',
      fields: { id: 'id', ownerId: 'owner_id', rank: { column: 'rank', type: 'int', nullable: true }, label: 'label' },
    };
    const owner: ResourceDefinition = { name: 'Owner', table: 'owners', key: 'id', fields: { id: 'id' } };
    const things: RelationDefinition = {
      resource: 'Thing',
      kind: 'many',
      localField: 'id',
      foreignField: 'ownerId',
      orderBy: [{ field: 'rank' }, { field: 'label', direction: 'desc' }],
    };
    const small = new ResourceRegistry([owner, thing]);
    const condition = (after: boolean[]) => /AND (.*) ORDER BY/.exec(buildConnectionQuery(small, things, { fields: [], after }).text)![1];

    it('compares term by term, NULLs last ascending, after a cursor of values', () => {
      expect(condition([false, false, false])).toBe(
        `(((t.rank > $2 OR t.rank IS NULL)) OR (t.rank = $3 AND t.label < $4) OR (t.rank = $5 AND t.label = $6 AND t.id < $7))`,
      );
    });

    it('after a cursor whose rank is NULL only NULL ranks follow, and no parameter is compared with NULL', () => {
      const text = condition([true, false, false]);
      expect(text).toBe(`((t.rank IS NULL AND t.label < $2) OR (t.rank IS NULL AND t.label = $3 AND t.id < $4))`);
    });

    it('before a cursor the comparison turns round: every value precedes a NULL rank', () => {
      expect(/AND (.*) ORDER BY/.exec(buildConnectionQuery(small, things, { fields: [], before: [true, false, false], backward: true }).text)![1]).toBe(
        `((t.rank IS NOT NULL) OR (t.rank IS NULL AND t.label > $2) OR (t.rank IS NULL AND t.label = $3 AND t.id > $4))`,
      );
    });
  });
});

describe('buildCountQuery', () => {
  it('counts the rows of every parent under the filter, ignoring cursors, one GROUP BY', () => {
    expect(buildCountQuery(registry, relation('Workspace', 'bookings'), { filter: [['status', 'in']] })).toEqual({
      text: `SELECT t.workspace_id AS "__parent", count(*) AS "count" FROM bookings t WHERE t.workspace_id = ANY($1) AND t.status = ANY($2) GROUP BY t.workspace_id`,
      columns: ['__parent', 'count'],
      timestamps: [],
      parameters: [{ from: 'filter', field: 'status', operator: 'in' }],
      embeds: [],
    });
  });
});

describe('statements for a token restricted to workspaces', () => {
  it('a lookup reads only rows of the token workspaces', () => {
    const query = buildLookup(registry.get('CourseTemplate'), 'id', { restricted: true });
    expect(query.text).toMatch(/ FROM course_templates t WHERE t\.id = ANY\(\$1\) AND t\.workspace_id = ANY\(\$2\)$/);
    expect(query.parameters).toEqual([{ from: 'workspaces' }]);
    expect(buildLookup(registry.get('Workspace'), 'id', { restricted: true }).text).toMatch(/ FROM workspaces t WHERE t\.id = ANY\(\$1\) AND t\.id = ANY\(\$2\)$/);
  });

  it('a relation restricts its rows and each embedded row of a resource that carries a workspace; data of no workspace is not restricted', () => {
    const query = buildRelationQuery(registry, relation('CourseRun', 'bookings'), { embedded: ['participant', 'courseRun'], fields: ['status'], restricted: true });
    expect(query.text).toContain(
      `FROM bookings t LEFT JOIN participants e1 ON e1.booking_id = t.id LEFT JOIN course_runs e2 ON e2.id = t.course_run_id AND e2.workspace_id = ANY($2) ` +
        `WHERE t.course_run_id = ANY($1) AND t.workspace_id = ANY($3) ORDER BY`,
    );
    expect(query.parameters).toEqual([{ from: 'workspaces' }, { from: 'workspaces' }]);
  });

  it('unrestricted statements are the ones the fixed operations always sent', () => {
    const bookings = relation('Workspace', 'bookings');
    expect(buildRelationQuery(registry, bookings, { filter: [], embedded: [], restricted: false })).toEqual(buildRelationQuery(registry, bookings));
    expect(buildLookup(registry.get('Booking'), 'id', { restricted: false }).text).not.toContain('workspace_id = ANY');
  });

  it('connections and counts are restricted too', () => {
    expect(buildConnectionQuery(registry, relation('Workspace', 'bookings'), { fields: [], restricted: true }).text).toContain('WHERE t.workspace_id = p.k AND t.workspace_id = ANY($2)');
    expect(buildCountQuery(registry, relation('CourseRun', 'sessions'), { restricted: true }).text).toContain('WHERE t.course_run_id = ANY($1) AND t.workspace_id = ANY($2)');
  });
});

describe('the registry knows where each resource keeps its workspace', () => {
  it('every resource with roots declares it; Participant, reached only through its booking, holds none', () => {
    for (const resource of resources) if (resource.roots) expect(typeof resource.workspaceField, resource.name).toBe('string');
    expect(registry.get('Participant').workspaceField).toBeUndefined();
    expect(registry.get('Participant').workspaceThrough).toEqual({ field: 'bookingId', resource: 'Booking' });
    expect(registry.get('Participant').personalData).toBe(true);
  });

  it('refuses a resource with roots that does not say, and a workspace field that does not exist', () => {
    const thing = (extra: Partial<ResourceDefinition>): ResourceDefinition => ({ name: 'Thing', table: 'things', key: 'id', fields: { id: 'id' }, ...extra });
    expect(() => new ResourceRegistry([thing({ roots: { thing: { argument: 'id' } } })])).toThrow(
      'Resource Thing has roots: declare its workspaceField (or workspaceField: null for data of no workspace)',
    );
    expect(() => new ResourceRegistry([thing({ workspaceField: 'ownerId' })]).validate()).toThrow('Thing.workspaceField: Thing has no field ownerId');
    expect(() => new ResourceRegistry([thing({ workspaceField: null, roots: { thing: { argument: 'id' } } })]).validate()).not.toThrow();
  });
});
