import { FILTER_OPERATORS, fieldDefinition, type FilterOperator, type ResourceDefinition } from '../db/resource-registry.ts';
import type { ConnectionOrderTerm, FilterTerm } from '../db/sql-builder.ts';
import { ApiError } from '../errors.ts';
import { decodeCursor } from './cursor.ts';

/** A page holds at most this many rows; `first`/`last` default to it. */
export const MAX_PAGE_SIZE = 100;

/** A connection's arguments, checked: what its statement and the values of its parameters need. */
export interface ConnectionArguments {
  /** The page size: `first`, `last`, or the maximum. */
  size: number;
  /** `last`: the rows nearest the end of the list (or the `before` cursor). */
  backward: boolean;
  after?: unknown[];
  before?: unknown[];
  /** The filter's conditions, in the resource's field order then operator order. */
  filter: FilterTerm[];
  /** The value of each filter condition, by `field.operator`. */
  filterValues: Map<string, unknown>;
}

const OPERATOR_ORDER: readonly FilterOperator[] = ['eq', 'in', 'gt', 'gte', 'lt', 'lte'];

export const filterKey = (field: string, operator: FilterOperator) => `${field}.${operator}`;

/**
 * Checks `first`, `last`, `after`, `before` and `filter` of a connection field and returns them
 * parsed; bad values are an `invalid_request` that says what is wrong. `list` names the list, so
 * that a cursor of another list is refused.
 */
export function parseConnectionArguments(
  list: string,
  target: ResourceDefinition,
  order: readonly ConnectionOrderTerm[],
  args: Readonly<Record<string, unknown>>,
): ConnectionArguments {
  const first = pageSize('first', args.first);
  const last = pageSize('last', args.last);
  if (first !== undefined && last !== undefined) {
    throw new ApiError('invalid_request', 'Give "first" or "last", not both: "first" pages forward from "after", "last" backward from "before".');
  }
  const parsed: ConnectionArguments = {
    size: first ?? last ?? MAX_PAGE_SIZE,
    backward: last !== undefined,
    filter: [],
    filterValues: new Map(),
  };
  if (args.after !== undefined && args.after !== null) parsed.after = decodeCursor('after', args.after, list, order);
  if (args.before !== undefined && args.before !== null) parsed.before = decodeCursor('before', args.before, list, order);
  const filter = args.filter;
  if (filter !== undefined && filter !== null) {
    if (typeof filter !== 'object') throw new ApiError('invalid_request', 'Argument "filter" must be an object.');
    for (const [field, conditions] of Object.entries(filter)) {
      if (conditions === null || conditions === undefined) continue;
      if (!(field in target.fields) || typeof conditions !== 'object') throw new ApiError('invalid_request', `Argument "filter" has no field "${field}".`);
      const allowed = FILTER_OPERATORS[fieldDefinition(target, field).type];
      for (const [operator, value] of Object.entries(conditions as Record<string, unknown>)) {
        if (value === null || value === undefined) continue;
        if (!allowed.includes(operator as FilterOperator)) {
          throw new ApiError('invalid_request', `Argument "filter" cannot compare "${field}" with "${operator}".`);
        }
        parsed.filter.push([field, operator as FilterOperator]);
        parsed.filterValues.set(filterKey(field, operator as FilterOperator), filterValue(value));
      }
    }
    const fields = Object.keys(target.fields);
    parsed.filter.sort(([a, x], [b, y]) => fields.indexOf(a) - fields.indexOf(b) || OPERATOR_ORDER.indexOf(x) - OPERATOR_ORDER.indexOf(y));
  }
  return parsed;
}

function pageSize(name: string, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_PAGE_SIZE) {
    throw new ApiError('invalid_request', `Argument "${name}" must be an integer from 1 to ${MAX_PAGE_SIZE}.`);
  }
  return value;
}

/** DateTime arguments arrive as Date: they are bound as ISO 8601 text with its zone. */
function filterValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(filterValue);
  return value;
}
