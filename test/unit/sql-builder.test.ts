import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/db/resources.ts';
import { PARENT_COLUMN, buildLookup, buildRelationQuery } from '../../src/db/sql-builder.ts';
import { fixed, argument, BOOK_COLUMNS, BOOK_SELECT, shelfWith } from '../support/book-shelf-registry.ts';

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
