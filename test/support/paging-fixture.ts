/** A workspace of bookings to page through, and the query that pages them, for the connection tests. */
export const STATUSES = ['pending', 'confirmed', 'waitlisted', 'cancelled', 'expired'] as const;
export const SOURCES = ['admin', 'public_page', 'widget', 'api'] as const;

/**
 * A workspace of `count` bookings over two runs. Three bookings share each creation minute, so
 * that ties broken by id fall across page boundaries.
 */
export function bookingsFixture(name: string, count: number) {
  const iso = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 0, minutes)).toISOString();
  return {
    workspace: { name },
    members: [],
    courseTemplates: [{ ref: 't', title: `${name} course`, description: 'About it.' }],
    courseRuns: ['r0', 'r1'].map((ref, index) => ({
      ref,
      template: 't',
      status: 'published',
      sessions: [{ ref: `${ref}s`, startsAt: iso(10_000 + index), durationMinutes: 60, timeZone: 'UTC', location: 'Room', status: 'scheduled' }],
    })),
    bookings: Array.from({ length: count }, (_, i) => ({
      ref: `b${i}`,
      courseRun: `r${i % 2}`,
      source: SOURCES[i % SOURCES.length]!,
      status: STATUSES[i % STATUSES.length]!,
      createdAt: iso(Math.floor(i / 3)),
      updatedAt: iso(Math.floor(i / 3)),
      ...(i % 4 === 0 ? {} : { participant: { name: `Person ${i}`, email: `p${i}@paging.example` } }),
    })),
  };
}

export interface Page {
  edges: Array<{ cursor: string; node: { id: string } }>;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  totalCount?: number;
}

export const PAGE = /* GraphQL */ `
  query Page($id: ID!, $first: Int, $after: String, $last: Int, $before: String, $filter: BookingFilter) {
    workspace(id: $id) {
      bookingsConnection(first: $first, after: $after, last: $last, before: $before, filter: $filter) {
        edges { cursor node { id } }
        pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
        totalCount
      }
    }
  }
`;
