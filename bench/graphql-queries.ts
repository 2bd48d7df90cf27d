/**
 * The three internal GraphQL queries the service is measured on against PostGraphile v5, each
 * written once for each schema, and what both answers are turned into so that the rows can be
 * compared before anything is timed (issue 42):
 *
 * - Q1: the M workspace's first 100 course runs, their template's title and description, and up to
 *   20 sessions each (start, duration, time zone, location);
 * - Q2: the M workspace's newest 100 bookings: status, source, times, course run id, and the
 *   participant's name and e-mail;
 * - Q3: a workspace of 2,000 runs × 10 sessions: its first 100 runs with up to 20 sessions each.
 *
 * Each list in the order the service documents: runs by createdAt then id, sessions by startsAt
 * then id, bookings newest first, ties by id descending; PostGraphile is given the same order.
 */

export type QueryName = 'Q1' | 'Q2' | 'Q3';

export interface BenchQuery {
  name: QueryName;
  what: string;
  /** Which seeded workspace it reads. */
  workspace: 'M' | 'runs';
  service: string;
  postgraphile: string;
  /** Both answers as the same plain rows. */
  rows(data: unknown, server: 'service' | 'postgraphile'): unknown;
}

type Json = Record<string, unknown>;
const at = (value: unknown, ...path: string[]): unknown => path.reduce<unknown>((node, key) => (node as Json | null | undefined)?.[key], value);
const nodes = (value: unknown) => (value as { nodes: Json[] }).nodes;
const instant = (value: unknown) => new Date(String(value)).toISOString();

const SESSION_FIELDS = 'startsAt durationMinutes timeZone location';
const session = (row: Json) => ({ startsAt: instant(row.startsAt), durationMinutes: row.durationMinutes, timeZone: row.timeZone, location: row.location });

const serviceRuns = (withTemplate: boolean) => /* GraphQL */ `
query Runs($id: ID!) {
  workspace(id: $id) {
    courseRunsConnection(first: 100) {
      nodes {
        id
        ${withTemplate ? 'template { title description }' : ''}
        sessionsConnection(first: 20) { nodes { ${SESSION_FIELDS} } }
      }
    }
  }
}`;

const postgraphileRuns = (withTemplate: boolean) => /* GraphQL */ `
query Runs($id: String!) {
  workspaceByRowId(rowId: $id) {
    courseRunsByWorkspaceId(first: 100, orderBy: [CREATED_AT_ASC, PRIMARY_KEY_ASC]) {
      nodes {
        rowId
        ${withTemplate ? 'courseTemplateByWorkspaceIdAndTemplateId { title description }' : ''}
        sessionsByWorkspaceIdAndCourseRunId(first: 20, orderBy: [STARTS_AT_ASC, PRIMARY_KEY_ASC]) { nodes { ${SESSION_FIELDS} } }
      }
    }
  }
}`;

function runRows(withTemplate: boolean) {
  return (data: unknown, server: 'service' | 'postgraphile') => {
    const runs = server === 'service' ? at(data, 'workspace', 'courseRunsConnection') : at(data, 'workspaceByRowId', 'courseRunsByWorkspaceId');
    return nodes(runs).map((run) => {
      const template = (server === 'service' ? run.template : run.courseTemplateByWorkspaceIdAndTemplateId) as Json | undefined;
      const sessions = server === 'service' ? run.sessionsConnection : run.sessionsByWorkspaceIdAndCourseRunId;
      return {
        id: server === 'service' ? run.id : run.rowId,
        ...(withTemplate ? { title: template?.title, description: template?.description } : {}),
        sessions: nodes(sessions).map(session),
      };
    });
  };
}

export const QUERIES: BenchQuery[] = [
  {
    name: 'Q1',
    what: 'M: first 100 runs, template title and description, ≤ 20 sessions each',
    workspace: 'M',
    service: serviceRuns(true),
    postgraphile: postgraphileRuns(true),
    rows: runRows(true),
  },
  {
    name: 'Q2',
    what: 'M: newest 100 bookings with their participant',
    workspace: 'M',
    service: /* GraphQL */ `
query Bookings($id: ID!) {
  workspace(id: $id) {
    bookingsConnection(first: 100) {
      nodes { id status source createdAt updatedAt courseRunId participant { name email } }
    }
  }
}`,
    postgraphile: /* GraphQL */ `
query Bookings($id: String!) {
  workspaceByRowId(rowId: $id) {
    bookingsByWorkspaceId(first: 100, orderBy: [CREATED_AT_DESC, PRIMARY_KEY_DESC]) {
      nodes { rowId status source createdAt updatedAt courseRunId participantByBookingId { name email } }
    }
  }
}`,
    rows(data, server) {
      const bookings = server === 'service' ? at(data, 'workspace', 'bookingsConnection') : at(data, 'workspaceByRowId', 'bookingsByWorkspaceId');
      return nodes(bookings).map((booking) => {
        const participant = (server === 'service' ? booking.participant : booking.participantByBookingId) as Json | null;
        return {
          id: server === 'service' ? booking.id : booking.rowId,
          status: String(booking.status).toLowerCase(),
          source: String(booking.source).toLowerCase(),
          createdAt: instant(booking.createdAt),
          updatedAt: instant(booking.updatedAt),
          courseRunId: booking.courseRunId,
          participant: participant ? { name: participant.name, email: participant.email } : null,
        };
      });
    },
  },
  {
    name: 'Q3',
    what: '2,000 runs × 10 sessions: first 100 runs, ≤ 20 sessions each',
    workspace: 'runs',
    service: serviceRuns(false),
    postgraphile: postgraphileRuns(false),
    rows: runRows(false),
  },
];

/** The workspace of Q3: 2,000 published runs of 10 sessions, nothing else. */
export const RUNS_WORKSPACE = { name: 'runs', publishedRuns: 2_000, sessionsPerRun: 10, draftRuns: 0, cancelledPerRun: 0, bookings: 0 } as const;
