import { describe, expect, it } from 'vitest';
import { ResourceRegistry } from '../../src/model/resource-registry.ts';
import { frozenModel } from '../support/frozen-model.ts';
import { PARENT_COLUMN, buildRelationQuery, embeddable, joinedResource } from '../../src/sql/sql-builder.ts';
import { author, review, cover, book } from '../support/book-shelf-registry.ts';

const createRegistry = () => frozenModel().registry;

describe('the relations of the real registry', () => {
  const registry = createRegistry();
  const relation = (resource: string, name: string) => registry.relation(registry.get(resource), name);
  const COURSE_RUN_SELECT =
    `t.id AS "id", t.workspace_id AS "workspaceId", t.template_id AS "templateId", t.status AS "status", ` +
    `(t.created_at AT TIME ZONE 'UTC')::text AS "createdAt", (t.updated_at AT TIME ZONE 'UTC')::text AS "updatedAt", (t.listed_from AT TIME ZONE 'UTC')::text AS "listedFrom"`;

  it('resources.course-listing: a workspace courses are its runs with a listing start, by it, then id', () => {
    const query = buildRelationQuery(registry, relation('Workspace', 'courses'));
    expect(query.text).toBe(`SELECT t.workspace_id AS "__parent", ${COURSE_RUN_SELECT} FROM course_runs t WHERE t.workspace_id = ANY($1) AND t.listed_from IS NOT NULL ORDER BY t.listed_from ASC, t.id ASC`);
    expect(query.parameters).toEqual([]);
  });

  it('a workspace bookings are read newest first, ties by id descending, filtered as asked', () => {
    const query = buildRelationQuery(registry, relation('Workspace', 'bookings'), { filter: [['source', 'in'], ['status', 'in']] });
    expect(query.text).toBe(
      `SELECT t.workspace_id AS "__parent", t.id AS "id", t.workspace_id AS "workspaceId", ` +
        `t.course_run_id AS "courseRunId", t.source AS "source", t.status AS "status", (t.created_at AT TIME ZONE 'UTC')::text AS "createdAt", ` +
        `(t.updated_at AT TIME ZONE 'UTC')::text AS "updatedAt" FROM bookings t WHERE t.workspace_id = ANY($1) AND t.source = ANY($2) ` +
        `AND t.status = ANY($3) ORDER BY t.created_at DESC, t.id DESC`,
    );
    expect(query.parameters).toEqual([
      { from: 'filter', field: 'source', operator: 'in' },
      { from: 'filter', field: 'status', operator: 'in' },
    ]);
  });

  it('a run sessions are read by start then id, with the run embedded when selected', () => {
    const query = buildRelationQuery(registry, relation('CourseRun', 'sessions'), { filter: [['status', 'eq']], embedded: ['courseRun'], fields: ['startsAt'] });
    expect(query.text).toBe(
      `SELECT t.course_run_id AS "__parent", t.id AS "id", (t.starts_at AT TIME ZONE 'UTC')::text AS "startsAt", ` +
        `e1.id AS "courseRun.id", e1.workspace_id AS "courseRun.workspaceId", e1.template_id AS "courseRun.templateId", ` +
        `e1.status AS "courseRun.status", (e1.created_at AT TIME ZONE 'UTC')::text AS "courseRun.createdAt", ` +
        `(e1.updated_at AT TIME ZONE 'UTC')::text AS "courseRun.updatedAt", (e1.listed_from AT TIME ZONE 'UTC')::text AS "courseRun.listedFrom" ` +
        `FROM sessions t LEFT JOIN course_runs e1 ON e1.id = t.course_run_id WHERE t.course_run_id = ANY($1) AND t.status = $2 ` +
        `ORDER BY t.starts_at ASC, t.id ASC`,
    );
    expect(query.timestamps).toEqual(['startsAt', 'courseRun.createdAt', 'courseRun.updatedAt', 'courseRun.listedFrom']);
  });

  it('a booking participant is a one-relation by booking id, read in the booking statement when embedded', () => {
    expect(embeddable(registry, registry.get('Booking'), 'participant')).toBe(true);
    const query = buildRelationQuery(registry, relation('CourseRun', 'bookings'), { embedded: ['participant'], fields: ['status'] });
    expect(query.text).toBe(
      `SELECT t.course_run_id AS "__parent", t.id AS "id", t.status AS "status", ` +
        `e1.booking_id AS "participant.bookingId", e1.name AS "participant.name", e1.email AS "participant.email" ` +
        `FROM bookings t LEFT JOIN participants e1 ON e1.booking_id = t.id WHERE t.course_run_id = ANY($1) ` +
        `ORDER BY t.created_at DESC, t.id DESC`,
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

  it('an embedded relation reads only the fields it is given of its target, with the key: a personal one not selected is not read', () => {
    const query = buildRelationQuery(registry, relation('CourseRun', 'bookings'), { embedded: ['participant'], embeddedFields: { participant: ['name'] }, fields: ['status'] });
    expect(query.text).toBe(
      `SELECT t.course_run_id AS "__parent", t.id AS "id", t.status AS "status", ` +
        `e1.booking_id AS "participant.bookingId", e1.name AS "participant.name" ` +
        `FROM bookings t LEFT JOIN participants e1 ON e1.booking_id = t.id WHERE t.course_run_id = ANY($1) ` +
        `ORDER BY t.created_at DESC, t.id DESC`,
    );
    expect(query.embeds).toEqual([{ relation: 'participant', keyAlias: 'participant.bookingId', fields: [['participant.bookingId', 'bookingId'], ['participant.name', 'name']] }]);
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

  it('accepts a one-relation that matches the target key', () => {
    expect(embeddable(registry, book, 'author')).toBe(true);
    expect(embeddable(registry, book, 'hardCover')).toBe(true);
  });

  it('refuses many-relations and unknown relations', () => {
    expect(embeddable(registry, book, 'reviews')).toBe(false);
    expect(embeddable(registry, book, 'missing')).toBe(false);
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
