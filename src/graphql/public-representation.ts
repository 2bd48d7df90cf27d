import type { components } from '../contract/public-v1-types.ts';
import type { BookingSource, BookingStatus } from './operation-types.generated.ts';
import type { BookingResult, CourseRunResult, OperationName, OperationResults } from './operations.ts';

/**
 * The public JSON representation of a course and a booking, built from the fixed operations'
 * results. The types are generated from openapi/public-v1.yaml, so a change of the documented
 * shapes that this module does not follow fails `npm run typecheck`. Used by the REST facade and
 * by the booking.created webhook alike.
 */
export type Course = components['schemas']['Course'];
export type Session = components['schemas']['Session'];
export type Booking = components['schemas']['Booking'];
export type BookingCreatedEvent = components['schemas']['BookingCreatedEvent'];

// GraphQL writes enum values in its own style (PUBLIC_PAGE); the contract's values are lowercase.
// Every value of the schema has its public one: a new value fails the type-check here.
const SOURCES = { ADMIN: 'admin', PUBLIC_PAGE: 'public_page', WIDGET: 'widget', API: 'api' } as const satisfies Record<BookingSource, Booking['source']>;
const STATUSES = {
  PENDING: 'pending',
  CONFIRMED: 'confirmed',
  WAITLISTED: 'waitlisted',
  CANCELLED: 'cancelled',
  EXPIRED: 'expired',
} as const satisfies Record<BookingStatus, Booking['status']>;

function enumValue<T extends string>(values: Readonly<Record<string, T>>, value: string, field: string): T {
  const mapped = values[value];
  if (mapped === undefined) throw new Error(`Booking.${field} has no public value for ${value}`);
  return mapped;
}

export function courseRunsOf(data: OperationResults['courses' | 'coursesOfRuns']): CourseRunResult[] {
  return data.workspace?.courses ?? [];
}

export function bookingsOf(data: OperationResults['bookings' | 'bookingsOfIds']): BookingResult[] {
  return data.workspace?.bookingsConnection.nodes ?? [];
}

/** docs/contract-rules.md, `resources.course-fields`: exactly these fields, in this order. */
export function toCourse(run: CourseRunResult): Course {
  return {
    id: run.id,
    title: run.template.title,
    description: run.template.description,
    sessions: run.sessions.map(
      (session): Session => ({
        id: session.id,
        startsAt: session.startsAt,
        durationMinutes: session.durationMinutes,
        timeZone: session.timeZone,
        location: session.location,
      }),
    ),
  };
}

/**
 * One booking in the public shape: the items of /bookings and the `data.booking` of a
 * booking.created webhook. `participant` is absent without participants:read and absent when the
 * booking has none; it is never null (docs/contract-rules.md, `resources.participant-scope`). The
 * scope check here is the last guard: the operation already skipped loading it.
 */
export function toBooking(booking: BookingResult, withParticipant: boolean): Booking {
  const mapped: Booking = {
    id: booking.id,
    courseRunId: booking.courseRunId,
    source: enumValue(SOURCES, booking.source, 'source'),
    status: enumValue(STATUSES, booking.status, 'status'),
    createdAt: booking.createdAt,
    updatedAt: booking.updatedAt,
  };
  if (withParticipant && booking.participant) {
    mapped.participant = { name: booking.participant.name, email: booking.participant.email };
  }
  return mapped;
}

/**
 * What each fixed operation fills of the contract: the schema of openapi/public-v1.yaml its
 * result becomes, item by item, with every variant included (participants too). Messages about a
 * broken operation name the contract's fields through it (operation-problems.ts).
 */
export const PUBLIC_ANSWERS: { [Name in OperationName]: { schema: keyof components['schemas']; represent(data: OperationResults[Name]): unknown[] } } = {
  courses: { schema: 'Course', represent: (data) => courseRunsOf(data).map(toCourse) },
  coursesOfRuns: { schema: 'Course', represent: (data) => courseRunsOf(data).map(toCourse) },
  bookings: { schema: 'Booking', represent: (data) => bookingsOf(data).map((booking) => toBooking(booking, true)) },
  bookingsOfIds: { schema: 'Booking', represent: (data) => bookingsOf(data).map((booking) => toBooking(booking, true)) },
  webhookBooking: { schema: 'Booking', represent: (data) => (data.booking ? [toBooking(data.booking, true)] : []) },
};
