import { describe, expect, it } from 'vitest';
import { frozenModel } from '../support/frozen-model.ts';
import { PARENT_COLUMN, buildLookup, buildRelationQuery } from '../../src/sql/sql-builder.ts';
import { BOOK_COLUMNS, BOOK_SELECT, shelfWith } from '../support/book-shelf-registry.ts';

const createRegistry = () => frozenModel().registry;

describe('buildLookup', () => {
  it('reads every field of a resource by any of its keys with one = ANY($1) and names the parent column first', () => {
    const registry = createRegistry();
    expect(buildLookup(registry.get('CourseRun'), 'id')).toEqual({
      text:
        `SELECT t.id AS "__parent", t.id AS "id", t.workspace_id AS "workspaceId", t.template_id AS "templateId", t.status AS "status", ` +
        `(t.created_at AT TIME ZONE 'UTC')::text AS "createdAt", (t.updated_at AT TIME ZONE 'UTC')::text AS "updatedAt", ` +
        `(t.listed_from AT TIME ZONE 'UTC')::text AS "listedFrom" FROM course_runs t WHERE t.id = ANY($1)`,
      columns: ['__parent', 'id', 'workspaceId', 'templateId', 'status', 'createdAt', 'updatedAt', 'listedFrom'],
      timestamps: ['createdAt', 'updatedAt', 'listedFrom'],
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
        `(t.created_at AT TIME ZONE 'UTC')::text AS "createdAt", (t.updated_at AT TIME ZONE 'UTC')::text AS "updatedAt", t.revision AS "revision" ` +
        `FROM sessions t WHERE t.course_run_id = ANY($1)`,
    );
  });

  it('reads only the fields it is given, with the key and the field it looks up by', () => {
    const registry = createRegistry();
    expect(buildLookup(registry.get('Session'), 'courseRunId', { fields: ['location'] }).text).toBe(
      `SELECT t.course_run_id AS "__parent", t.id AS "id", t.location AS "location" FROM sessions t WHERE t.course_run_id = ANY($1)`,
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

  it('orders by fields in the declared order and direction, ascending unless desc is given', () => {
    const { registry, relation } = shelfWith({ orderBy: [{ field: 'publishedAt', direction: 'desc' }, { field: 'title', direction: 'asc' }, { field: 'id' }] });
    expect(buildRelationQuery(registry, relation).text).toBe(
      `SELECT t.shelf_id AS "__parent", ${BOOK_SELECT} FROM books t WHERE t.shelf_id = ANY($1) ORDER BY t.published_at DESC, t.title ASC, t.id ASC`,
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

  it('filters a whole list with the conditions of its filter, each value a parameter after the keys', () => {
    const { registry, relation } = shelfWith({ orderBy: [{ field: 'title' }] });
    const query = buildRelationQuery(registry, relation, { filter: [['status', 'in'], ['publishedAt', 'gte']], fields: [] });
    expect(query.text).toBe(
      `SELECT t.shelf_id AS "__parent", t.id AS "id" FROM books t WHERE t.shelf_id = ANY($1) AND t.status = ANY($2) AND t.published_at >= $3::timestamptz ORDER BY t.title ASC`,
    );
    expect(query.parameters).toEqual([
      { from: 'filter', field: 'status', operator: 'in' },
      { from: 'filter', field: 'publishedAt', operator: 'gte' },
    ]);
  });

  it('a named list reads only the rows whose listing field is set', () => {
    const { registry, relation } = shelfWith({ present: 'publishedAt', orderBy: [{ field: 'publishedAt' }, { field: 'id' }] });
    expect(buildRelationQuery(registry, relation, { fields: [] }).text).toBe(
      `SELECT t.shelf_id AS "__parent", t.id AS "id" FROM books t WHERE t.shelf_id = ANY($1) AND t.published_at IS NOT NULL ORDER BY t.published_at ASC, t.id ASC`,
    );
  });

  it('embeds a one-relation with a LEFT JOIN, its columns aliased relation.field', () => {
    const { registry, relation } = shelfWith({});
    expect(buildRelationQuery(registry, relation, { embedded: ['author', 'hardCover'], fields: ['title'] })).toEqual({
      text:
        `SELECT t.shelf_id AS "__parent", t.id AS "id", t.title AS "title", ` +
        `e1.id AS "author.id", e1.full_name AS "author.name", (e1.born_at AT TIME ZONE 'UTC')::text AS "author.bornAt", ` +
        `e2.book_id AS "hardCover.bookId", e2.colour AS "hardCover.colour", e2.kind AS "hardCover.kind" ` +
        `FROM books t LEFT JOIN authors e1 ON e1.id = t.author_id LEFT JOIN covers e2 ON e2.book_id = t.id ` +
        `WHERE t.shelf_id = ANY($1)`,
      columns: [PARENT_COLUMN, 'id', 'title', 'author.id', 'author.name', 'author.bornAt', 'hardCover.bookId', 'hardCover.colour', 'hardCover.kind'],
      timestamps: ['author.bornAt'],
      parameters: [],
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

  it('refuses to embed a relation that embeddable refuses, naming it', () => {
    const { registry, relation } = shelfWith({});
    expect(() => buildRelationQuery(registry, relation, { embedded: ['reviews'] })).toThrow('Book.reviews cannot be embedded');
    expect(() => buildRelationQuery(registry, relation, { embedded: ['namesake'] })).toThrow('Book.namesake cannot be embedded');
    expect(() => buildRelationQuery(registry, relation, { embedded: ['missing'] })).toThrow('Book.missing cannot be embedded');
  });
});
