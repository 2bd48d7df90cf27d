import { describe, expect, it } from 'vitest';
import { ResourceRegistry, type RelationDefinition, type ResourceDefinition, type Scalar } from '../../src/db/resource-registry.ts';
import { createRegistry } from '../../src/db/resources.ts';
import { PARENT_COLUMN, buildLookup, buildRelationQuery, embeddable, joinedResource, type ParameterSource } from '../../src/db/sql-builder.ts';

// A small library: shelves hold books, books have an author, reviews and translations.
const author: ResourceDefinition = {
  name: 'Author',
  table: 'authors',
  key: 'id',
  fields: { id: 'id', name: 'full_name', bornAt: { column: 'born_at', type: 'timestamp' } },
};

const review: ResourceDefinition = {
  name: 'Review',
  table: 'reviews',
  key: 'id',
  fields: { id: 'id', bookId: 'book_id', stars: 'stars', status: 'status', writtenAt: { column: 'written_at', type: 'timestamp' } },
};

const cover: ResourceDefinition = {
  name: 'Cover',
  table: 'covers',
  key: 'bookId',
  fields: { bookId: 'book_id', colour: 'colour', kind: 'kind' },
};

const book: ResourceDefinition = {
  name: 'Book',
  table: 'books',
  key: 'id',
  fields: { id: 'id', shelfId: 'shelf_id', authorId: 'author_id', title: 'title', status: 'status', publishedAt: { column: 'published_at', type: 'timestamp' } },
  relations: {
    author: { resource: 'Author', kind: 'one', localField: 'authorId', foreignField: 'id' },
    hardCover: { resource: 'Cover', kind: 'one', localField: 'id', foreignField: 'bookId', where: { kind: 'hard' } },
    reviews: { resource: 'Review', kind: 'many', localField: 'id', foreignField: 'bookId' },
    approvedReviews: { resource: 'Review', kind: 'many', localField: 'id', foreignField: 'bookId', where: { status: 'approved' } },
    // Not embeddable: each of these could return several rows, or needs what a join cannot give.
    namesake: { resource: 'Author', kind: 'one', localField: 'title', foreignField: 'name' },
    filteredAuthor: { resource: 'Author', kind: 'one', localField: 'authorId', foreignField: 'id', arguments: { name: { field: 'name' } } },
    limitedAuthor: {
      resource: 'Author',
      kind: 'one',
      localField: 'authorId',
      foreignField: 'id',
      limit: { argument: 'first', default: 1, max: 1 },
    },
    reviewedAuthor: {
      resource: 'Author',
      kind: 'one',
      localField: 'authorId',
      foreignField: 'id',
      requires: [{ relation: 'books' }],
    },
  },
};

// Author.books exists for `reviewedAuthor`'s requires.
author.relations = { books: { resource: 'Book', kind: 'many', localField: 'id', foreignField: 'authorId' } };

const fixed = (value: Scalar): ParameterSource => ({ from: 'fixed', value });
const argument = (name: string): ParameterSource => ({ from: 'argument', name });

const BOOK_COLUMNS = [PARENT_COLUMN, 'id', 'shelfId', 'authorId', 'title', 'status', 'publishedAt'];
const BOOK_SELECT =
  `t.id AS "id", t.shelf_id AS "shelfId", t.author_id AS "authorId", t.title AS "title", t.status AS "status", ` +
  `(t.published_at AT TIME ZONE 'UTC')::text AS "publishedAt"`;

/** A registry in which `Shelf.books` is the relation under test, validated as createRegistry would. */
function shelfWith(relation: Omit<RelationDefinition, 'resource' | 'kind' | 'localField' | 'foreignField'>): {
  registry: ResourceRegistry;
  relation: RelationDefinition;
} {
  const books: RelationDefinition = { resource: 'Book', kind: 'many', localField: 'id', foreignField: 'shelfId', ...relation };
  const shelf: ResourceDefinition = { name: 'Shelf', table: 'shelves', key: 'id', fields: { id: 'id', label: 'label' }, relations: { books } };
  const registry = new ResourceRegistry([shelf, book, author, review, cover]);
  registry.validate();
  return { registry, relation: books };
}

describe('buildLookup', () => {
  it('reads every field of a resource by any of its keys with one = ANY($1) and names the parent column first', () => {
    const registry = createRegistry();
    expect(buildLookup(registry.get('CourseRun'), 'id')).toEqual({
      text:
        `SELECT t.id AS "__parent", t.id AS "id", t.workspace_id AS "workspaceId", t.template_id AS "templateId", t.status AS "status", ` +
        `(t.created_at AT TIME ZONE 'UTC')::text AS "createdAt", (t.updated_at AT TIME ZONE 'UTC')::text AS "updatedAt" ` +
        `FROM course_runs t WHERE t.id = ANY($1)`,
      columns: ['__parent', 'id', 'workspaceId', 'templateId', 'status', 'createdAt', 'updatedAt'],
      timestamps: ['createdAt', 'updatedAt'],
      parameters: [],
      embeds: [],
    });
  });

  it('looks a resource up by a field other than its key, reading that field as the parent column', () => {
    const registry = createRegistry();
    expect(buildLookup(registry.get('Participant'), 'bookingId').text).toBe(
      `SELECT t.booking_id AS "__parent", t.booking_id AS "bookingId", t.name AS "name", t.email AS "email" FROM participants t WHERE t.booking_id = ANY($1)`,
    );
    expect(buildLookup(registry.get('Session'), 'courseRunId').text).toBe(
      `SELECT t.course_run_id AS "__parent", t.id AS "id", t.workspace_id AS "workspaceId", t.course_run_id AS "courseRunId", (t.starts_at AT TIME ZONE 'UTC')::text AS "startsAt", ` +
        `t.duration_minutes AS "durationMinutes", t.time_zone AS "timeZone", t.location AS "location", t.status AS "status", ` +
        `t.revision AS "revision", (t.updated_at AT TIME ZONE 'UTC')::text AS "updatedAt" FROM sessions t WHERE t.course_run_id = ANY($1)`,
    );
  });

  it('a resource without timestamps lists none and a lookup by an unknown field is refused, naming it', () => {
    const registry = createRegistry();
    expect(buildLookup(registry.get('Participant'), 'bookingId').timestamps).toEqual([]);
    expect(() => buildLookup(registry.get('CourseRun'), 'title')).toThrow('CourseRun has no field title');
  });
});

describe('buildRelationQuery', () => {
  it('reads a plain many-relation for every parent at once with = ANY($1), in declaration order of the fields', () => {
    const { registry, relation } = shelfWith({});
    expect(buildRelationQuery(registry, relation)).toEqual({
      text: `SELECT t.shelf_id AS "__parent", ${BOOK_SELECT} FROM books t WHERE t.shelf_id = ANY($1)`,
      columns: BOOK_COLUMNS,
      timestamps: ['publishedAt'],
      parameters: [],
      embeds: [],
    });
  });

  it('binds fixed where values after the keys, in the order they are declared, with their types kept', () => {
    const { registry, relation } = shelfWith({ where: { status: 'available', title: 'Dune', authorId: 7 } });
    const query = buildRelationQuery(registry, relation);
    expect(query.text).toBe(
      `SELECT t.shelf_id AS "__parent", ${BOOK_SELECT} FROM books t WHERE t.shelf_id = ANY($1) AND t.status = $2 AND t.title = $3 AND t.author_id = $4`,
    );
    expect(query.parameters).toEqual([fixed('available'), fixed('Dune'), fixed(7)]);
  });

  it('orders by fields in the declared order and direction, ascending unless desc is given', () => {
    const { registry, relation } = shelfWith({ orderBy: [{ field: 'publishedAt', direction: 'desc' }, { field: 'title', direction: 'asc' }, { field: 'id' }] });
    expect(buildRelationQuery(registry, relation).text).toBe(
      `SELECT t.shelf_id AS "__parent", ${BOOK_SELECT} FROM books t WHERE t.shelf_id = ANY($1) ORDER BY t.published_at DESC, t.title ASC, t.id ASC`,
    );
  });

  it('requires a related row with EXISTS, binding the filter where after the related relation own where', () => {
    const { registry, relation } = shelfWith({
      where: { status: 'available' },
      requires: [{ relation: 'reviews' }, { relation: 'approvedReviews', where: { stars: 5 } }],
    });
    const query = buildRelationQuery(registry, relation);
    expect(query.text).toBe(
      `SELECT t.shelf_id AS "__parent", ${BOOK_SELECT} FROM books t WHERE t.shelf_id = ANY($1) AND t.status = $2 ` +
        `AND EXISTS (SELECT 1 FROM reviews r1 WHERE r1.book_id = t.id) ` +
        `AND EXISTS (SELECT 1 FROM reviews r2 WHERE r2.book_id = t.id AND r2.status = $3 AND r2.stars = $4)`,
    );
    expect(query.parameters).toEqual([fixed('available'), fixed('approved'), fixed(5)]);
  });

  it('orders by an aggregate over a relation with a where through a correlated subquery, binding its values before any argument', () => {
    const { registry, relation } = shelfWith({
      arguments: { status: { field: 'status' } },
      orderBy: [
        { aggregate: 'min', relation: 'reviews', field: 'writtenAt', where: { status: 'approved' } },
        { aggregate: 'count', relation: 'approvedReviews', field: 'id', direction: 'desc' },
        { aggregate: 'max', relation: 'reviews', field: 'stars', direction: 'desc' },
        { field: 'id' },
      ],
    });
    const query = buildRelationQuery(registry, relation, { arguments: ['status'] });
    expect(query.text).toBe(
      `SELECT t.shelf_id AS "__parent", ${BOOK_SELECT} FROM books t WHERE t.shelf_id = ANY($1) AND t.status = ANY($4) ORDER BY ` +
        `(SELECT min(r1.written_at) FROM reviews r1 WHERE r1.book_id = t.id AND r1.status = $2) ASC, ` +
        `(SELECT count(r2.id) FROM reviews r2 WHERE r2.book_id = t.id AND r2.status = $3) DESC, ` +
        `(SELECT max(r3.stars) FROM reviews r3 WHERE r3.book_id = t.id) DESC, t.id ASC`,
    );
    expect(query.parameters).toEqual([fixed('approved'), fixed('approved'), argument('status')]);
  });

  it('filters by the arguments present only, each = ANY($n) in the order given, after the fixed values', () => {
    const { registry, relation } = shelfWith({
      where: { title: 'Dune' },
      arguments: { status: { field: 'status' }, author: { field: 'authorId' }, title: { field: 'title' } },
    });
    const both = buildRelationQuery(registry, relation, { arguments: ['author', 'status'] });
    expect(both.text).toBe(
      `SELECT t.shelf_id AS "__parent", ${BOOK_SELECT} FROM books t WHERE t.shelf_id = ANY($1) AND t.title = $2 AND t.author_id = ANY($3) AND t.status = ANY($4)`,
    );
    expect(both.parameters).toEqual([fixed('Dune'), argument('author'), argument('status')]);

    const one = buildRelationQuery(registry, relation, { arguments: ['status'] });
    expect(one.text).toBe(`SELECT t.shelf_id AS "__parent", ${BOOK_SELECT} FROM books t WHERE t.shelf_id = ANY($1) AND t.title = $2 AND t.status = ANY($3)`);
    expect(one.parameters).toEqual([fixed('Dune'), argument('status')]);
  });

  it('ignores a present name that is not one of the relation arguments', () => {
    const { registry, relation } = shelfWith({ arguments: { status: { field: 'status' } } });
    const query = buildRelationQuery(registry, relation, { arguments: ['first', 'status', 'unknown'] });
    expect(query.text).toBe(`SELECT t.shelf_id AS "__parent", ${BOOK_SELECT} FROM books t WHERE t.shelf_id = ANY($1) AND t.status = ANY($2)`);
    expect(query.parameters).toEqual([argument('status')]);
  });

  it('reads a per-parent limit through a LATERAL scan for each key, the limit bound last after fixed values and arguments', () => {
    const { registry, relation } = shelfWith({
      where: { status: 'available' },
      arguments: { author: { field: 'authorId' } },
      orderBy: [{ field: 'publishedAt', direction: 'desc' }, { field: 'id', direction: 'desc' }],
      limit: { argument: 'first', default: 10, max: 50 },
    });
    expect(buildRelationQuery(registry, relation, { arguments: ['author'] })).toEqual({
      text:
        `SELECT p.k AS "__parent", x.* FROM unnest($1::text[]) AS p(k) CROSS JOIN LATERAL ` +
        `(SELECT ${BOOK_SELECT} FROM books t WHERE t.shelf_id = p.k AND t.status = $2 AND t.author_id = ANY($3) ` +
        `ORDER BY t.published_at DESC, t.id DESC LIMIT $4) x`,
      columns: BOOK_COLUMNS,
      timestamps: ['publishedAt'],
      parameters: [fixed('available'), argument('author'), { from: 'limit' }],
      embeds: [],
    });
    expect(buildRelationQuery(registry, relation).text).toBe(
      `SELECT p.k AS "__parent", x.* FROM unnest($1::text[]) AS p(k) CROSS JOIN LATERAL ` +
        `(SELECT ${BOOK_SELECT} FROM books t WHERE t.shelf_id = p.k AND t.status = $2 ORDER BY t.published_at DESC, t.id DESC LIMIT $3) x`,
    );
  });

  it('reads only the selected fields, always with the key, in declaration order whatever the order asked', () => {
    const { registry, relation } = shelfWith({ orderBy: [{ field: 'publishedAt' }] });
    const query = buildRelationQuery(registry, relation, { fields: ['publishedAt', 'title'] });
    expect(query.text).toBe(
      `SELECT t.shelf_id AS "__parent", t.id AS "id", t.title AS "title", (t.published_at AT TIME ZONE 'UTC')::text AS "publishedAt" ` +
        `FROM books t WHERE t.shelf_id = ANY($1) ORDER BY t.published_at ASC`,
    );
    expect(query.columns).toEqual([PARENT_COLUMN, 'id', 'title', 'publishedAt']);
    expect(query.timestamps).toEqual(['publishedAt']);
  });

  it('reads the key alone when no field is selected, and ignores selected names that are not fields', () => {
    const { registry, relation } = shelfWith({ orderBy: [{ field: 'title' }] });
    const query = buildRelationQuery(registry, relation, { fields: ['author', 'reviews'] });
    expect(query.text).toBe(`SELECT t.shelf_id AS "__parent", t.id AS "id" FROM books t WHERE t.shelf_id = ANY($1) ORDER BY t.title ASC`);
    expect(query.columns).toEqual([PARENT_COLUMN, 'id']);
    expect(query.timestamps).toEqual([]);
    expect(buildRelationQuery(registry, relation, { fields: [] }).text).toBe(query.text);
  });

  it('embeds a one-relation with a LEFT JOIN, its columns aliased relation.field, its where bound before the relation own values', () => {
    const { registry, relation } = shelfWith({ where: { status: 'available' }, arguments: { title: { field: 'title' } } });
    expect(buildRelationQuery(registry, relation, { arguments: ['title'], embedded: ['author', 'hardCover'], fields: ['title'] })).toEqual({
      text:
        `SELECT t.shelf_id AS "__parent", t.id AS "id", t.title AS "title", ` +
        `e1.id AS "author.id", e1.full_name AS "author.name", (e1.born_at AT TIME ZONE 'UTC')::text AS "author.bornAt", ` +
        `e2.book_id AS "hardCover.bookId", e2.colour AS "hardCover.colour", e2.kind AS "hardCover.kind" ` +
        `FROM books t LEFT JOIN authors e1 ON e1.id = t.author_id LEFT JOIN covers e2 ON e2.book_id = t.id AND e2.kind = $2 ` +
        `WHERE t.shelf_id = ANY($1) AND t.status = $3 AND t.title = ANY($4)`,
      columns: [PARENT_COLUMN, 'id', 'title', 'author.id', 'author.name', 'author.bornAt', 'hardCover.bookId', 'hardCover.colour', 'hardCover.kind'],
      timestamps: ['author.bornAt'],
      parameters: [fixed('hard'), fixed('available'), argument('title')],
      embeds: [
        {
          relation: 'author',
          keyAlias: 'author.id',
          fields: [
            ['author.id', 'id'],
            ['author.name', 'name'],
            ['author.bornAt', 'bornAt'],
          ],
        },
        {
          relation: 'hardCover',
          keyAlias: 'hardCover.bookId',
          fields: [
            ['hardCover.bookId', 'bookId'],
            ['hardCover.colour', 'colour'],
            ['hardCover.kind', 'kind'],
          ],
        },
      ],
    });
  });

  it('embeds a one-relation inside the LATERAL scan of a limited relation', () => {
    const { registry, relation } = shelfWith({ orderBy: [{ field: 'id' }], limit: { argument: 'first', default: 5, max: 5 } });
    expect(buildRelationQuery(registry, relation, { embedded: ['author'], fields: [] }).text).toBe(
      `SELECT p.k AS "__parent", x.* FROM unnest($1::text[]) AS p(k) CROSS JOIN LATERAL ` +
        `(SELECT t.id AS "id", e1.id AS "author.id", e1.full_name AS "author.name", (e1.born_at AT TIME ZONE 'UTC')::text AS "author.bornAt" ` +
        `FROM books t LEFT JOIN authors e1 ON e1.id = t.author_id WHERE t.shelf_id = p.k ORDER BY t.id ASC LIMIT $2) x`,
    );
  });

  it('refuses to embed a relation that embeddable refuses, naming it', () => {
    const { registry, relation } = shelfWith({});
    expect(() => buildRelationQuery(registry, relation, { embedded: ['reviews'] })).toThrow('Book.reviews cannot be embedded');
    expect(() => buildRelationQuery(registry, relation, { embedded: ['namesake'] })).toThrow('Book.namesake cannot be embedded');
    expect(() => buildRelationQuery(registry, relation, { embedded: ['missing'] })).toThrow('Book.missing cannot be embedded');
  });
});

describe('the relations of the real registry', () => {
  const registry = createRegistry();
  const relation = (resource: string, name: string) => registry.relation(registry.get(resource), name);
  const COURSE_RUN_SELECT =
    `t.id AS "id", t.workspace_id AS "workspaceId", t.template_id AS "templateId", t.status AS "status", ` +
    `(t.created_at AT TIME ZONE 'UTC')::text AS "createdAt", (t.updated_at AT TIME ZONE 'UTC')::text AS "updatedAt"`;

  it('a workspace courses are its published runs with a scheduled session, by their earliest scheduled session, then id', () => {
    const query = buildRelationQuery(registry, relation('Workspace', 'courses'));
    expect(query.text).toBe(
      `SELECT t.workspace_id AS "__parent", ${COURSE_RUN_SELECT} FROM course_runs t WHERE t.workspace_id = ANY($1) AND t.status = $2 ` +
        `AND EXISTS (SELECT 1 FROM sessions r1 WHERE r1.course_run_id = t.id AND r1.status = $3) ` +
        `ORDER BY (SELECT min(r2.starts_at) FROM sessions r2 WHERE r2.course_run_id = t.id AND r2.status = $4) ASC, t.id ASC`,
    );
    expect(query.parameters).toEqual([fixed('published'), fixed('scheduled'), fixed('scheduled')]);
  });

  it('a workspace bookings are read newest first, ties by id descending, at most the limit per workspace', () => {
    const query = buildRelationQuery(registry, relation('Workspace', 'bookings'), { arguments: ['status', 'source'] });
    expect(query.text).toBe(
      `SELECT p.k AS "__parent", x.* FROM unnest($1::text[]) AS p(k) CROSS JOIN LATERAL (SELECT t.id AS "id", t.workspace_id AS "workspaceId", ` +
        `t.course_run_id AS "courseRunId", t.source AS "source", t.status AS "status", (t.created_at AT TIME ZONE 'UTC')::text AS "createdAt", ` +
        `(t.updated_at AT TIME ZONE 'UTC')::text AS "updatedAt" FROM bookings t WHERE t.workspace_id = p.k AND t.status = ANY($2) ` +
        `AND t.source = ANY($3) ORDER BY t.created_at DESC, t.id DESC LIMIT $4) x`,
    );
    expect(query.parameters).toEqual([argument('status'), argument('source'), { from: 'limit' }]);
  });

  it('a run sessions are read by start then id, with the run embedded when selected', () => {
    const query = buildRelationQuery(registry, relation('CourseRun', 'sessions'), { arguments: ['status'], embedded: ['courseRun'], fields: ['startsAt'] });
    expect(query.text).toBe(
      `SELECT t.course_run_id AS "__parent", t.id AS "id", (t.starts_at AT TIME ZONE 'UTC')::text AS "startsAt", ` +
        `e1.id AS "courseRun.id", e1.workspace_id AS "courseRun.workspaceId", e1.template_id AS "courseRun.templateId", ` +
        `e1.status AS "courseRun.status", (e1.created_at AT TIME ZONE 'UTC')::text AS "courseRun.createdAt", ` +
        `(e1.updated_at AT TIME ZONE 'UTC')::text AS "courseRun.updatedAt" ` +
        `FROM sessions t LEFT JOIN course_runs e1 ON e1.id = t.course_run_id WHERE t.course_run_id = ANY($1) AND t.status = ANY($2) ` +
        `ORDER BY t.starts_at ASC, t.id ASC`,
    );
    expect(query.timestamps).toEqual(['startsAt', 'courseRun.createdAt', 'courseRun.updatedAt']);
  });

  it('a booking participant is a one-relation by booking id, read in the booking statement when embedded', () => {
    expect(embeddable(registry, registry.get('Booking'), 'participant')).toBe(true);
    const query = buildRelationQuery(registry, relation('CourseRun', 'bookings'), { embedded: ['participant'], fields: ['status'] });
    expect(query.text).toBe(
      `SELECT p.k AS "__parent", x.* FROM unnest($1::text[]) AS p(k) CROSS JOIN LATERAL (SELECT t.id AS "id", t.status AS "status", ` +
        `e1.booking_id AS "participant.bookingId", e1.name AS "participant.name", e1.email AS "participant.email" ` +
        `FROM bookings t LEFT JOIN participants e1 ON e1.booking_id = t.id WHERE t.course_run_id = p.k ` +
        `ORDER BY t.created_at DESC, t.id DESC LIMIT $2) x`,
    );
    expect(query.embeds).toEqual([
      {
        relation: 'participant',
        keyAlias: 'participant.bookingId',
        fields: [
          ['participant.bookingId', 'bookingId'],
          ['participant.name', 'name'],
          ['participant.email', 'email'],
        ],
      },
    ]);
  });

  it('without the participant embedded, no statement on bookings reads the participants table', () => {
    const query = buildRelationQuery(registry, relation('CourseRun', 'bookings'));
    expect(query.text).not.toContain('participants');
    expect(query.columns).toEqual([PARENT_COLUMN, 'id', 'workspaceId', 'courseRunId', 'source', 'status', 'createdAt', 'updatedAt']);
  });
});

describe('embeddable', () => {
  const registry = new ResourceRegistry([book, author, review, cover]);
  registry.validate();

  it('accepts a one-relation that matches the target key, with or without a fixed where', () => {
    expect(embeddable(registry, book, 'author')).toBe(true);
    expect(embeddable(registry, book, 'hardCover')).toBe(true);
  });

  it('refuses many-relations, unknown relations, and one-relations with arguments, a limit or required rows', () => {
    expect(embeddable(registry, book, 'reviews')).toBe(false);
    expect(embeddable(registry, book, 'missing')).toBe(false);
    expect(embeddable(registry, book, 'filteredAuthor')).toBe(false);
    expect(embeddable(registry, book, 'limitedAuthor')).toBe(false);
    expect(embeddable(registry, book, 'reviewedAuthor')).toBe(false);
  });

  it('refuses a one-relation whose foreign field is not the target key, as a join on it could multiply the parent rows', () => {
    expect(embeddable(registry, book, 'namesake')).toBe(false);
  });

  it('refuses every relation of a resource that declares none', () => {
    expect(embeddable(registry, review, 'book')).toBe(false);
  });
});

describe('joinedResource', () => {
  const registry = createRegistry();

  it('names the table and key column and selects every field aliased with the prefix, timestamps as UTC text', () => {
    const workspace = joinedResource(registry.get('Workspace'));
    expect(workspace.table).toBe('workspaces');
    expect(workspace.keyColumn).toBe('id');
    expect(workspace.columns('w', 'workspace.')).toBe(
      `w.id AS "workspace.id", w.name AS "workspace.name", (w.created_at AT TIME ZONE 'UTC')::text AS "workspace.createdAt"`,
    );
    expect(workspace.columns('ws', '')).toBe(`ws.id AS "id", ws.name AS "name", (ws.created_at AT TIME ZONE 'UTC')::text AS "createdAt"`);
  });

  it('the key column is the column of the key field, not the field name', () => {
    expect(joinedResource(registry.get('Participant')).keyColumn).toBe('booking_id');
  });

  it('builds the row from the prefixed columns alone, timestamps in the DateTime form and missing columns undefined', () => {
    const workspace = joinedResource(registry.get('Workspace'));
    const row = workspace.row(
      { id: 'key-1', 'workspace.id': 'w-1', 'workspace.name': 'Acme', 'workspace.createdAt': '2025-03-04 05:06:07.89', scope: 'x' },
      'workspace.',
    );
    expect(row).toEqual({ id: 'w-1', name: 'Acme', createdAt: '2025-03-04T05:06:07.890Z' });
    expect(Object.keys(row)).toEqual(['id', 'name', 'createdAt']);
    expect(workspace.row({ 'workspace.id': 'w-2', 'workspace.createdAt': null }, 'workspace.')).toEqual({
      id: 'w-2',
      name: undefined,
      createdAt: null,
    });
  });
});

describe('the resource registry', () => {
  const plain = (overrides: Partial<ResourceDefinition>): ResourceDefinition => ({
    name: 'Thing',
    table: 'things',
    key: 'id',
    fields: { id: 'id', name: 'name' },
    ...overrides,
  });

  it('accepts plain lowercase SQL identifiers with digits and underscores', () => {
    expect(() => new ResourceRegistry([plain({ table: '_things_2', fields: { id: 'id', name: 'name_2', other: '_x' } })])).not.toThrow();
  });

  it('refuses a table name that is not a plain SQL identifier, naming it', () => {
    for (const table of ['Things', 'things;', 'public.things', '"things"', 'my things', '2things', 'things-x', '']) {
      expect(() => new ResourceRegistry([plain({ table })]), table).toThrow(`Not a plain SQL identifier: ${table}`);
    }
  });

  it('refuses a column name that is not a plain SQL identifier, naming it', () => {
    for (const column of ['Name', 'name"', 'name; DROP TABLE things', 'lower(name)', 'n.name', 'naïve']) {
      expect(() => new ResourceRegistry([plain({ fields: { id: 'id', name: column } })]), column).toThrow(`Not a plain SQL identifier: ${column}`);
    }
  });

  it('refuses a resource registered twice and a key without a column', () => {
    expect(() => new ResourceRegistry([plain({}), plain({})])).toThrow('Resource Thing is registered twice');
    expect(() => new ResourceRegistry([plain({ key: 'code' })])).toThrow('Resource Thing: key field code has no column');
  });

  it('get, has and relation name what is unknown', () => {
    const registry = new ResourceRegistry([book, author, review, cover]);
    expect(registry.has('Book')).toBe(true);
    expect(registry.has('Shelf')).toBe(false);
    expect(() => registry.get('Shelf')).toThrow('Unknown resource Shelf');
    expect(() => registry.relation(book, 'shelf')).toThrow('Unknown relation Book.shelf');
    expect(registry.all().map((resource) => resource.name)).toEqual(['Book', 'Author', 'Review', 'Cover']);
  });

  describe('validate', () => {
    const check = (relation: Partial<RelationDefinition>, resource: Partial<ResourceDefinition> = {}) => () =>
      new ResourceRegistry([
        {
          name: 'Shelf',
          table: 'shelves',
          key: 'id',
          fields: { id: 'id' },
          relations: { books: { resource: 'Book', kind: 'many', localField: 'id', foreignField: 'shelfId', ...relation } },
          ...resource,
        },
        book,
        author,
        review,
        cover,
      ]).validate();

    it('accepts the real registry and a registry whose relations name only known resources and fields', () => {
      expect(() => createRegistry()).not.toThrow();
      expect(check({ where: { status: 'x' }, orderBy: [{ field: 'id' }], requires: [{ relation: 'reviews' }] })).not.toThrow();
    });

    it('refuses a relation to an unknown resource', () => {
      expect(check({ resource: 'Magazine' })).toThrow('Unknown resource Magazine');
    });

    it('refuses unknown local and foreign fields, naming the relation and the field', () => {
      expect(check({ localField: 'code' })).toThrow('Shelf.books: Shelf has no field code');
      expect(check({ foreignField: 'shelf' })).toThrow('Shelf.books: Book has no field shelf');
    });

    it('refuses unknown fields in where, arguments and field ordering', () => {
      expect(check({ where: { state: 'x' } })).toThrow('Shelf.books: Book has no field state');
      expect(check({ arguments: { status: { field: 'state' } } })).toThrow('Shelf.books: Book has no field state');
      expect(check({ orderBy: [{ field: 'published' }] })).toThrow('Shelf.books: Book has no field published');
    });

    it('refuses an aggregate over an unknown relation or field, and a requirement of an unknown relation', () => {
      expect(check({ orderBy: [{ aggregate: 'min', relation: 'ratings', field: 'stars' }] })).toThrow('Unknown relation Book.ratings');
      expect(check({ orderBy: [{ aggregate: 'min', relation: 'reviews', field: 'score' }] })).toThrow('Shelf.books: Review has no field score');
      expect(check({ requires: [{ relation: 'ratings' }] })).toThrow('Unknown relation Book.ratings');
    });

    it('regression: an unknown field in a requirement or aggregate where passed validate and failed every query that read the relation', () => {
      expect(check({ requires: [{ relation: 'reviews', where: { state: 'approved' } }] })).toThrow('Shelf.books: Review has no field state');
      expect(check({ orderBy: [{ aggregate: 'min', relation: 'reviews', field: 'stars', where: { state: 'approved' } }] })).toThrow(
        'Shelf.books: Review has no field state',
      );
    });

    it('regression: a root looking a resource up by an unknown field passed validate and failed every query of that root', () => {
      expect(check({}, { workspaceField: null, roots: { shelf: { argument: 'id' }, shelfByLabel: { argument: 'label', field: 'label' } } })).toThrow(
        'Shelf.roots.shelfByLabel: Shelf has no field label',
      );
      expect(check({}, { workspaceField: null, roots: { shelf: { argument: 'id' } } })).not.toThrow();
    });

    it('refuses a field of an unknown type, naming it', () => {
      expect(check({}, { fields: { id: { column: 'id', type: 'uuid' as never } } })).toThrow('Resource Shelf: field id has an unknown type uuid');
    });

    it('createRegistry validates the resources it is given beside the real ones', () => {
      expect(() =>
        createRegistry([
          {
            name: 'Voucher',
            table: 'vouchers',
            key: 'id',
            fields: { id: 'id', workspaceId: 'workspace_id' },
            relations: { workspace: { resource: 'Workspace', kind: 'one', localField: 'workspaceId', foreignField: 'uuid' } },
          },
        ]),
      ).toThrow('Voucher.workspace: Workspace has no field uuid');
    });
  });
});
