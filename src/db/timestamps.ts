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
