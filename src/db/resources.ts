import { ResourceRegistry, type FieldDefinition, type ResourceDefinition } from './resource-registry.ts';

/** Only scheduled sessions are listed: cancelled ones never appear in /courses (docs/contract-rules.md, resources.sessions-listed). */
const SCHEDULED = { status: 'scheduled' } as const;

const id = (column: string): FieldDefinition => ({ column, type: 'id' });
const enumeration = (column: string): FieldDefinition => ({ column, type: 'enum' });
const timestamp = (column: string): FieldDefinition => ({ column, type: 'timestamp' });
const int = (column: string): FieldDefinition => ({ column, type: 'int' });

export const resources: readonly ResourceDefinition[] = [
  {
    name: 'Workspace',
    table: 'workspaces',
    key: 'id',
    fields: { id: id('id'), name: 'name', createdAt: timestamp('created_at') },
    workspaceField: 'id',
    roots: { workspace: { argument: 'id' } },
    relations: {
      // Published runs with at least one scheduled session, by their earliest one, ties by id.
      courses: {
        resource: 'CourseRun',
        kind: 'many',
        localField: 'id',
        foreignField: 'workspaceId',
        where: { status: 'published' },
        requires: [{ relation: 'sessions', where: SCHEDULED }],
        orderBy: [
          { aggregate: 'min', relation: 'sessions', field: 'startsAt', where: SCHEDULED },
          { field: 'id' },
        ],
      },
      courseRuns: {
        resource: 'CourseRun',
        kind: 'many',
        localField: 'id',
        foreignField: 'workspaceId',
        arguments: { status: { field: 'status' } },
        orderBy: [{ field: 'createdAt' }, { field: 'id' }],
      },
      courseTemplates: {
        resource: 'CourseTemplate',
        kind: 'many',
        localField: 'id',
        foreignField: 'workspaceId',
        orderBy: [{ field: 'title' }, { field: 'id' }],
      },
      // Newest first, ties by id descending, at most 100 (docs/contract-rules.md, resources.booking-order and resources.booking-limit).
      bookings: {
        resource: 'Booking',
        kind: 'many',
        localField: 'id',
        foreignField: 'workspaceId',
        arguments: { status: { field: 'status' }, source: { field: 'source' } },
        orderBy: [
          { field: 'createdAt', direction: 'desc' },
          { field: 'id', direction: 'desc' },
        ],
        limit: { argument: 'first', default: 100, max: 100 },
      },
    },
  },
  {
    name: 'CourseTemplate',
    table: 'course_templates',
    key: 'id',
    fields: {
      id: id('id'),
      workspaceId: id('workspace_id'),
      title: 'title',
      description: 'description',
      revision: int('revision'),
      updatedAt: timestamp('updated_at'),
    },
    workspaceField: 'workspaceId',
    roots: { courseTemplate: { argument: 'id' } },
  },
  {
    name: 'CourseRun',
    table: 'course_runs',
    key: 'id',
    fields: {
      id: id('id'),
      workspaceId: id('workspace_id'),
      templateId: id('template_id'),
      status: enumeration('status'),
      createdAt: timestamp('created_at'),
      updatedAt: timestamp('updated_at'),
    },
    workspaceField: 'workspaceId',
    roots: { courseRun: { argument: 'id' } },
    relations: {
      template: { resource: 'CourseTemplate', kind: 'one', localField: 'templateId', foreignField: 'id' },
      sessions: {
        resource: 'Session',
        kind: 'many',
        localField: 'id',
        foreignField: 'courseRunId',
        arguments: { status: { field: 'status' } },
        orderBy: [{ field: 'startsAt' }, { field: 'id' }],
      },
      bookings: {
        resource: 'Booking',
        kind: 'many',
        localField: 'id',
        foreignField: 'courseRunId',
        orderBy: [
          { field: 'createdAt', direction: 'desc' },
          { field: 'id', direction: 'desc' },
        ],
        limit: { argument: 'first', default: 100, max: 100 },
      },
    },
  },
  {
    name: 'Session',
    table: 'sessions',
    key: 'id',
    fields: {
      id: id('id'),
      workspaceId: id('workspace_id'),
      courseRunId: id('course_run_id'),
      startsAt: timestamp('starts_at'),
      durationMinutes: int('duration_minutes'),
      timeZone: 'time_zone',
      location: 'location',
      status: enumeration('status'),
      revision: int('revision'),
      updatedAt: timestamp('updated_at'),
    },
    workspaceField: 'workspaceId',
    relations: {
      courseRun: { resource: 'CourseRun', kind: 'one', localField: 'courseRunId', foreignField: 'id' },
    },
  },
  {
    name: 'Booking',
    table: 'bookings',
    key: 'id',
    fields: {
      id: id('id'),
      workspaceId: id('workspace_id'),
      courseRunId: id('course_run_id'),
      source: enumeration('source'),
      status: enumeration('status'),
      createdAt: timestamp('created_at'),
      updatedAt: timestamp('updated_at'),
    },
    workspaceField: 'workspaceId',
    roots: { booking: { argument: 'id' } },
    relations: {
      courseRun: { resource: 'CourseRun', kind: 'one', localField: 'courseRunId', foreignField: 'id' },
      // Personal data: read only when a query selects `participant`.
      participant: { resource: 'Participant', kind: 'one', localField: 'id', foreignField: 'bookingId' },
    },
  },
  {
    name: 'Participant',
    table: 'participants',
    key: 'bookingId',
    fields: { bookingId: id('booking_id'), name: 'name', email: 'email' },
    // Reached only through its booking, whose workspace it shares.
    workspaceThrough: { field: 'bookingId', resource: 'Booking' },
    personalData: true,
  },
];

export function createRegistry(extra: readonly ResourceDefinition[] = []): ResourceRegistry {
  const registry = new ResourceRegistry([...resources, ...extra]);
  registry.validate();
  return registry;
}
