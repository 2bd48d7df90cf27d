import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { getOperationAST, parse, validate, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { PublicBookingFragment, PublicBookingsOfIdsQuery, PublicBookingsQuery, PublicCourseRunFragment, PublicCoursesOfRunsQuery, PublicCoursesQuery, WebhookBookingQuery } from './operation-types.generated.ts';
import type { GraphQLContext } from './schema.ts';

/** A booking as the public API shows it; participant data only when `$withParticipant` is true. */
const PUBLIC_BOOKING = /* GraphQL */ `
  fragment PublicBooking on Booking {
    id
    courseRunId
    source
    status
    createdAt
    updatedAt
    participant @include(if: $withParticipant) { name email }
  }
`;

/** How many bookings /bookings lists, newest first (docs/contract-rules.md). */
export const PUBLIC_BOOKINGS_LENGTH = 100;

/** A course run as /courses and the calendar feed show it; the calendar's fields only with `$calendar`. */
const PUBLIC_COURSE_RUN = /* GraphQL */ `
  fragment PublicCourseRun on CourseRun {
    id
    template {
      title
      description
      revision @include(if: $calendar)
      updatedAt @include(if: $calendar)
    }
    sessions(filter: { status: { eq: SCHEDULED } }) {
      id
      startsAt
      durationMinutes
      timeZone
      location
      revision @include(if: $calendar)
      updatedAt @include(if: $calendar)
    }
  }
`;

/**
 * The fixed operations behind the public REST endpoints and the calendar feed. They are parsed,
 * validated and compiled once at start-up; a request only supplies variables. The workspace id
 * always comes from the API key (or feed token), and participant data is not even loaded unless
 * the key holds participants:read.
 */
export const operationSources = {
  // /courses and the calendar feed run this one operation, so both list exactly the same sessions.
  // What only a calendar needs is included by `$calendar`; without it those columns are not read.
  courses: /* GraphQL */ `
    query PublicCourses($workspaceId: ID!, $calendar: Boolean!) {
      workspace(id: $workspaceId) {
        name @include(if: $calendar)
        courses { ...PublicCourseRun }
      }
    }
    ${PUBLIC_COURSE_RUN}
  `,
  // The same runs restricted to some ids: the pieces of an answer built again after a change
  // (src/answer-cache/pieces.ts). A run not listed any more is simply not returned.
  coursesOfRuns: /* GraphQL */ `
    query PublicCoursesOfRuns($workspaceId: ID!, $calendar: Boolean!, $runIds: [ID!]!) {
      workspace(id: $workspaceId) {
        name @include(if: $calendar)
        courses(filter: { id: { in: $runIds } }) { ...PublicCourseRun }
      }
    }
    ${PUBLIC_COURSE_RUN}
  `,
  bookings: /* GraphQL */ `
    query PublicBookings($workspaceId: ID!, $withParticipant: Boolean!) {
      workspace(id: $workspaceId) {
        bookingsConnection(first: ${PUBLIC_BOOKINGS_LENGTH}) { nodes { ...PublicBooking } }
      }
    }
    ${PUBLIC_BOOKING}
  `,
  bookingsOfIds: /* GraphQL */ `
    query PublicBookingsOfIds($workspaceId: ID!, $withParticipant: Boolean!, $bookingIds: [ID!]!) {
      workspace(id: $workspaceId) {
        bookingsConnection(first: ${PUBLIC_BOOKINGS_LENGTH}, filter: { id: { in: $bookingIds } }) { nodes { ...PublicBooking } }
      }
    }
    ${PUBLIC_BOOKING}
  `,
  // The booking of a booking.created webhook: the fragment /bookings uses, so that the payload's
  // booking has exactly the REST shape and the same participant rule.
  webhookBooking: /* GraphQL */ `
    query WebhookBooking($bookingId: ID!, $withParticipant: Boolean!) {
      booking(id: $bookingId) { ...PublicBooking }
    }
    ${PUBLIC_BOOKING}
  `,
} as const;

export type OperationName = keyof typeof operationSources;

/** What each fixed operation's `data` holds: generated from the documents above and the schema (npm run generate). */
export interface OperationResults {
  courses: PublicCoursesQuery;
  coursesOfRuns: PublicCoursesOfRunsQuery;
  bookings: PublicBookingsQuery;
  bookingsOfIds: PublicBookingsOfIdsQuery;
  webhookBooking: WebhookBookingQuery;
}

/** A course run as `PublicCourses` selects it; the calendar's extra fields only with `$calendar`. */
export type CourseRunResult = PublicCourseRunFragment;

/** A booking as `PublicBooking` selects it; enum values as GraphQL writes them (CONFIRMED). */
export type BookingResult = PublicBookingFragment;

export interface CompiledOperation<Name extends OperationName = OperationName> {
  readonly name: Name;
  /** `query PublicCourses`: the name of its trace span. */
  readonly title: string;
  /** The span's attributes, the operation's type and name as its document gives them. */
  readonly traceAttributes: Readonly<Record<'graphql.operation.type' | 'graphql.operation.name', string>>;
  execute(variables: Record<string, unknown>, context: GraphQLContext): Promise<ExecutionResult>;
}

export type CompiledOperations = { [Name in OperationName]: CompiledOperation<Name> };

export function compileOperations(schema: GraphQLSchema): CompiledOperations {
  const compiled: Partial<Record<OperationName, CompiledOperation>> = {};
  for (const [name, source] of Object.entries(operationSources) as Array<[OperationName, string]>) {
    compiled[name] = compileOperation(schema, name, source);
  }
  return compiled as CompiledOperations;
}

function compileOperation<Name extends OperationName>(schema: GraphQLSchema, name: Name, source: string): CompiledOperation<Name> {
  const document = parse(source);
  const errors = validate(schema, document);
  if (errors.length > 0) {
    throw new Error(`src/graphql/operations.ts: the operation ${name} does not match the schema the catalog and the overlay give: ${errors.map((e) => e.message).join('; ')}`);
  }
  const query = compileQuery(schema, document);
  if (!isCompiledQuery(query)) {
    throw new Error(`Operation ${name} does not compile: ${query.errors?.map((e) => e.message).join('; ')}`);
  }
  const compiledQuery: CompiledQuery = query;
  const definition = getOperationAST(document);
  const operationType = definition?.operation ?? 'query';
  const operationName = definition?.name?.value ?? name;
  return {
    name,
    title: `${operationType} ${operationName}`,
    traceAttributes: { 'graphql.operation.type': operationType, 'graphql.operation.name': operationName },
    async execute(variables, context) {
      return compiledQuery.query(undefined, context, variables) as Promise<ExecutionResult> | ExecutionResult;
    },
  };
}
