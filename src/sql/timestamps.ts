/**
 * A `timestamp` as PostgreSQL writes it in the ISO DateStyle (`YYYY-MM-DD HH:MM:SS`, then up to
 * six fractional digits with trailing zeros dropped). Timestamps are read as the UTC wall time
 * `(column AT TIME ZONE 'UTC')::text`: whatever the session's TimeZone, the text is UTC.
 */
const UTC_TEXT = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?$/;

/**
 * The DateTime text of a UTC timestamp read as text: exactly what `Date.prototype.toISOString`
 * writes (milliseconds truncated, as the pg driver's Date parsing truncates them). Text in any
 * other form (a year past 9999, BC, infinity) is returned unchanged, for DateTime to refuse.
 */
export function isoFromUtcText(text: unknown): unknown {
  if (typeof text !== 'string' || !UTC_TEXT.test(text)) return text;
  const milliseconds = text.length === 19 ? '000' : `${text.slice(20, 23)}00`.slice(0, 3);
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${milliseconds}Z`;
}

/** The select-list expression that reads a `timestamptz` column for `isoFromUtcText`. */
export function utcTextColumn(qualifiedColumn: string): string {
  return `(${qualifiedColumn} AT TIME ZONE 'UTC')::text`;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether the date and time written at the start of `text` (`YYYY-MM-DD`, `T` or a space,
 * `HH:MM`, then optionally `:SS`) name a real instant of the years 0001 to 9999: a month, a day of
 * that month, an hour, a minute and a second that exist. PostgreSQL refuses any other value with
 * an error, and JavaScript's Date silently moves it (February 30th becomes March 2nd).
 */
export function isCalendarDateTime(text: string): boolean {
  const match = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d)(?::(\d\d))?/.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0)) as [number, number, number, number, number, number];
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= DAYS_IN_MONTH[month - 1]! + (month === 2 && leap ? 1 : 0);
}
