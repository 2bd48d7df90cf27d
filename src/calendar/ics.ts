import ICAL from 'ical.js';

export interface CalendarSession {
  id: string;
  startsAt: string;
  durationMinutes: number;
  location: string;
  revision: number;
  updatedAt: string;
}

export interface CalendarCourse {
  id: string;
  title: string;
  description: string;
  revision: number;
  updatedAt: string;
  sessions: CalendarSession[];
}

// RFC 5545 3.1: content lines are folded so that no line, the leading space of a continuation
// included, is longer than 75 octets; ical.js folds by UTF-8 octets, never inside a character.
ICAL.foldLength = 74;

function utc(iso: string): ICAL.Time {
  return ICAL.Time.fromJSDate(new Date(iso), true);
}

function later(a: string, b: string): string {
  return a > b ? a : b;
}

/** The calendar component with its own properties, no events yet. */
function calendarOf(calendarName: string): ICAL.Component {
  const calendar = new ICAL.Component('vcalendar');
  calendar.addPropertyWithValue('version', '2.0');
  calendar.addPropertyWithValue('prodid', '-//Course booking//Public calendar feed v1//EN');
  calendar.addPropertyWithValue('calscale', 'GREGORIAN');
  calendar.addPropertyWithValue('method', 'PUBLISH');
  // An X- property is untyped to ical.js: typed as TEXT, its commas and semicolons are escaped.
  const name = new ICAL.Property('x-wr-calname');
  name.resetType('text');
  name.setValue(calendarName);
  calendar.addProperty(name);
  calendar.addPropertyWithValue('refresh-interval', ICAL.Duration.fromString('PT1H'));
  calendar.addPropertyWithValue('x-published-ttl', 'PT1H');
  return calendar;
}

/**
 * One VEVENT per listed session: UID stable per session; SEQUENCE and LAST-MODIFIED move
 * whenever the session or its course's title or description change, so subscribed clients
 * pick up edits. DTSTAMP is the last modification, which keeps the body (and its ETag) stable
 * between refreshes when nothing changed.
 */
function eventsOf(course: CalendarCourse): ICAL.Component[] {
  return course.sessions.map((session) => {
    const modified = utc(later(session.updatedAt, course.updatedAt));
    const event = new ICAL.Component('vevent');
    event.addPropertyWithValue('uid', session.id);
    event.addPropertyWithValue('dtstamp', modified);
    event.addPropertyWithValue('dtstart', utc(session.startsAt));
    event.addPropertyWithValue('duration', ICAL.Duration.fromSeconds(session.durationMinutes * 60));
    event.addPropertyWithValue('summary', course.title);
    event.addPropertyWithValue('location', session.location);
    event.addPropertyWithValue('description', course.description);
    event.addPropertyWithValue('sequence', session.revision + course.revision);
    event.addPropertyWithValue('last-modified', modified);
    return event;
  });
}

/** The feed as one document: what ical.js writes of the whole calendar. */
export function renderCalendar(calendarName: string, courses: readonly CalendarCourse[]): string {
  const calendar = calendarOf(calendarName);
  for (const course of courses) for (const event of eventsOf(course)) calendar.addSubcomponent(event);
  // ical.js ends lines with CRLF as RFC 5545 requires; the document ends with one too.
  return `${calendar.toString()}\r\n`;
}

const END = 'END:VCALENDAR';

/**
 * The feed in pieces, whose concatenation is `renderCalendar`'s document byte for byte: ical.js
 * writes a component as its properties, then each subcomponent followed by CRLF, then its END line.
 */
export function calendarFrame(calendarName: string): { head: string; tail: string } {
  const text = calendarOf(calendarName).toString();
  return { head: text.slice(0, -END.length), tail: `${END}\r\n` };
}

/** The events of one course as they stand in the whole document. */
export function courseEvents(course: CalendarCourse): string {
  let text = '';
  for (const event of eventsOf(course)) text += `${event.toString()}\r\n`;
  return text;
}
