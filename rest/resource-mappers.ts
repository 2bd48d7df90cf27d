/** GraphQL results → the REST shapes of contract part 2. */

export interface Session {
  id: string;
  startsAt: string;
  durationMinutes: number;
  timeZone: string;
  location: string;
}

export interface GraphCourseRun {
  id: string;
  template: { title: string; description: string };
  sessions: Session[];
}

export interface GraphCourseList {
  workspace: { courses: GraphCourseRun[] } | null;
}

/** The calendar feed's operation: the same listing with revisions and update times. */
export interface GraphCalendarList {
  workspace: {
    name: string;
    courses: Array<{
      id: string;
      template: { title: string; description: string; revision: number; updatedAt: string };
      sessions: Array<Session & { revision: number; updatedAt: string }>;
    }>;
  } | null;
}

export interface GraphBooking {
  id: string;
  courseRunId: string;
  source: string;
  status: string;
  createdAt: string;
  updatedAt: string;
  participant?: { name: string; email: string } | null;
}

export interface Course {
  id: string;
  title: string;
  description: string;
  sessions: Session[];
}

export type Booking = Omit<GraphBooking, 'participant'> & { participant?: { name: string; email: string } };

export function courseRunsOf(data: unknown): GraphCourseRun[] {
  return (data as GraphCourseList).workspace?.courses ?? [];
}

export function toCourse(run: GraphCourseRun): Course {
  return {
    id: run.id,
    title: run.template.title,
    description: run.template.description,
    sessions: run.sessions.map((session) => ({
      id: session.id,
      startsAt: session.startsAt,
      durationMinutes: session.durationMinutes,
      timeZone: session.timeZone,
      location: session.location,
    })),
  };
}

export function toCourses(data: unknown): Course[] {
  return courseRunsOf(data).map(toCourse);
}

/**
 * `participant` is absent without participants:read and absent when the booking has none; it
 * is never null (contract part 2, rule 1). The scope check here is the last guard: the operation
 * already skipped loading it.
 */
export function bookingsOf(data: unknown): GraphBooking[] {
  return (data as { workspace: { bookings: GraphBooking[] } | null }).workspace?.bookings ?? [];
}

/** One booking in the REST shape: also the `data.booking` of a booking.created webhook. */
export function toBooking(booking: GraphBooking, withParticipant: boolean): Booking {
  const mapped: Booking = {
    id: booking.id,
    courseRunId: booking.courseRunId,
    source: booking.source.toLowerCase(),
    status: booking.status.toLowerCase(),
    createdAt: booking.createdAt,
    updatedAt: booking.updatedAt,
  };
  if (withParticipant && booking.participant) {
    mapped.participant = { name: booking.participant.name, email: booking.participant.email };
  }
  return mapped;
}

export function toBookings(data: unknown, withParticipant: boolean): Booking[] {
  return bookingsOf(data).map((booking) => toBooking(booking, withParticipant));
}
