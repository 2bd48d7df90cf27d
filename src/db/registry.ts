import { ResourceRegistry, type ResourceDefinition } from './resource.ts';

/** Only scheduled sessions are listed: cancelled ones never appear in /courses (decisions.md). */
const SCHEDULED = { status: 'scheduled' } as const;

export const resources: readonly ResourceDefinition[] = [
  {
    name: 'Workspace',
    table: 'workspaces',
    key: 'id',
    fields: { id: 'id', name: 'name', createdAt: 'created_at' },
    timestamps: ['createdAt'],
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
      // Newest first, ties by id descending, at most 100 (contract part 4).
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
      id: 'id',
      workspaceId: 'workspace_id',
      title: 'title',
      description: 'description',
      revision: 'revision',
      updatedAt: 'updated_at',
    },
    timestamps: ['updatedAt'],
    roots: { courseTemplate: { argument: 'id' } },
  },
  {
    name: 'CourseRun',
    table: 'course_runs',
    key: 'id',
    fields: {
      id: 'id',
      workspaceId: 'workspace_id',
      templateId: 'template_id',
      status: 'status',
      createdAt: 'created_at',
      updatedAt: 'updated_at',
    },
    timestamps: ['createdAt', 'updatedAt'],
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
      id: 'id',
      courseRunId: 'course_run_id',
      startsAt: 'starts_at',
      durationMinutes: 'duration_minutes',
      timeZone: 'time_zone',
      location: 'location',
      status: 'status',
      revision: 'revision',
      updatedAt: 'updated_at',
    },
    timestamps: ['startsAt', 'updatedAt'],
    relations: {
      courseRun: { resource: 'CourseRun', kind: 'one', localField: 'courseRunId', foreignField: 'id' },
    },
  },
  {
    name: 'Booking',
    table: 'bookings',
    key: 'id',
    fields: {
      id: 'id',
      workspaceId: 'workspace_id',
      courseRunId: 'course_run_id',
      source: 'source',
      status: 'status',
      createdAt: 'created_at',
      updatedAt: 'updated_at',
    },
    timestamps: ['createdAt', 'updatedAt'],
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
    fields: { bookingId: 'booking_id', name: 'name', email: 'email' },
  },
];

export function createRegistry(extra: readonly ResourceDefinition[] = []): ResourceRegistry {
  const registry = new ResourceRegistry([...resources, ...extra]);
  registry.validate();
  return registry;
}
