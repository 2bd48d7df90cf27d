import { FILTER_OPERATORS, fieldDefinition, type FilterOperator, type ResourceDefinition } from '../model/resource-registry.ts';
import type { ConnectionOrderTerm, FilterTerm } from '../sql/sql-builder.ts';
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
  const max = target.maxPage ?? MAX_PAGE_SIZE;
  const first = pageSize('first', args.first, max);
  const last = pageSize('last', args.last, max);
  if (first !== undefined && last !== undefined) {
    throw new ApiError('invalid_request', 'Give "first" or "last", not both: "first" pages forward from "after", "last" backward from "before".');
  }
  const parsed: ConnectionArguments = {
    size: first ?? last ?? max,
    backward: last !== undefined,
    filter: [],
    filterValues: new Map(),
  };
  if (args.after !== undefined && args.after !== null) parsed.after = decodeCursor('after', args.after, list, order);
  if (args.before !== undefined && args.before !== null) parsed.before = decodeCursor('before', args.before, list, order);
  const filter = parseFilter(target, args.filter);
  parsed.filter = filter.terms;
  parsed.filterValues = filter.values;
  return parsed;
}

/** A `filter` argument, checked: its conditions in the resource's field order then operator order, and their values. */
export interface ParsedFilter {
  terms: FilterTerm[];
  /** The value of each condition, by `field.operator`. */
  values: Map<string, unknown>;
}

/** Checks a `filter` argument (of a connection or a whole list); a bad one is an `invalid_request` that says what is wrong. */
export function parseFilter(target: ResourceDefinition, filter: unknown): ParsedFilter {
  const parsed: ParsedFilter = { terms: [], values: new Map() };
  if (filter === undefined || filter === null) return parsed;
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
      parsed.terms.push([field, operator as FilterOperator]);
      parsed.values.set(filterKey(field, operator as FilterOperator), filterValue(value));
    }
  }
  const fields = Object.keys(target.fields);
  parsed.terms.sort(([a, x], [b, y]) => fields.indexOf(a) - fields.indexOf(b) || OPERATOR_ORDER.indexOf(x) - OPERATOR_ORDER.indexOf(y));
  return parsed;
}

function pageSize(name: string, value: unknown, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new ApiError('invalid_request', `Argument "${name}" must be an integer from 1 to ${max}.`);
  }
  return value;
}

/** DateTime arguments arrive as Date: they are bound as ISO 8601 text with its zone. */
function filterValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(filterValue);
  return value;
}
