import { distance } from 'fastest-levenshtein';
import pluralize from 'pluralize';

/**
 * The GraphQL names the catalog's names are served under, unless the overlay names them: what
 * PostGraphile's inflection does, in a few rules.
 */

/** `course_run_id` → `courseRunId`. */
export const camelCase = (name: string): string => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());

/** `booking_status` → `BookingStatus`. */
export const pascalCase = (name: string): string => camelCase(name).replace(/^[a-z]/, (letter) => letter.toUpperCase());

/** A table's rows: `course_runs` → `CourseRun`. */
export const typeName = (table: string): string => pascalCase(pluralize.singular(table));

/** `CourseRun` → `courseRun`: a root field, a one-to-one relation. */
export const lowerFirst = (name: string): string => name.replace(/^[A-Z]/, (letter) => letter.toLowerCase());

/** A forward relation named after its column: `course_run_id` → `courseRun`; null when the column does not end in `_id`. */
export const relationOfColumn = (column: string): string | null => (column.endsWith('_id') && column.length > 3 ? camelCase(column.slice(0, -3)) : null);

/** A table's rows in words, for messages: `course_runs` → `course run`. */
export const kindOf = (table: string): string => pluralize.singular(table).replaceAll('_', ' ');

/** The candidate nearest to a misspelt name, when one is near enough to suggest. */
export function nearest(name: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const candidate of candidates) {
    const apart = distance(name, candidate);
    if (apart < bestDistance) [best, bestDistance] = [candidate, apart];
  }
  return best;
}
