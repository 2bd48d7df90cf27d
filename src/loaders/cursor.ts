import { crc32 } from 'node:zlib';
import type { ConnectionOrderTerm } from '../sql/sql-builder.ts';
import { isCalendarDateTime } from '../sql/timestamps.ts';
import { ApiError } from '../errors.ts';

/** A timestamp in a cursor: the UTC text the database wrote, microseconds and all (see `utcTextColumn`). */
const UTC_TEXT = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?$/;
/** GraphQL's Int, which every `int` field of the registry is served as. */
const INT_32 = 2 ** 31;

/**
 * A cursor is opaque to clients: base64url of JSON holding the list it belongs to, the row's values
 * of the list's order terms (exactly as read, so that no sub-millisecond difference is lost) and a
 * CRC32 of both, so that an edited cursor is refused instead of read as another position.
 */
export function encodeCursor(list: string, values: readonly unknown[]): string {
  const body = JSON.stringify([list, values]);
  return Buffer.from(`${body}${crc32(body).toString(36)}`, 'utf8').toString('base64url');
}

/** The order values a cursor of `list` holds, or an `invalid_request` naming the argument. */
export function decodeCursor(argument: string, cursor: unknown, list: string, order: readonly ConnectionOrderTerm[]): unknown[] {
  const refused = () => new ApiError('invalid_request', `Argument "${argument}" is not a cursor of this list; use a cursor this list returned.`);
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw refused();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const end = text.lastIndexOf(']');
  if (end < 0) throw refused();
  const body = text.slice(0, end + 1);
  if (text.slice(end + 1) !== crc32(body).toString(36)) throw refused();
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw refused();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || parsed[0] !== list) throw refused();
  const values: unknown = parsed[1];
  if (!Array.isArray(values) || values.length !== order.length) throw refused();
  values.forEach((value, index) => {
    if (!fits(value, order[index]!)) throw refused();
  });
  return values;
}

/**
 * Whether a value could have been written by the list: the checksum only shows that the cursor
 * was not changed by accident, so a value the database could not have written (a 13th month, a
 * U+0000, an integer past the column's range) is refused here rather than by the database.
 */
function fits(value: unknown, term: ConnectionOrderTerm): boolean {
  if (value === null) return term.nullable;
  switch (term.type) {
    case 'timestamp':
      return typeof value === 'string' && UTC_TEXT.test(value) && isCalendarDateTime(value);
    case 'int':
      return Number.isInteger(value) && (value as number) >= -INT_32 && (value as number) < INT_32;
    case 'float':
      // float8 reads as a number, numeric as its decimal text.
      return (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value));
    case 'boolean':
      return typeof value === 'boolean';
    default:
      // PostgreSQL text cannot hold U+0000.
      return typeof value === 'string' && !value.includes('\u0000');
  }
}
