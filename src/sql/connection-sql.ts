import { columnOf, fieldDefinition, type FieldType, type FilterOperator, type OrderTerm, type RelationDefinition, type ResourceDefinition, type ResourceRegistry } from '../model/resource-registry.ts';
import { COUNT_COLUMN, PARENT_COLUMN, ParameterList, flip, orderColumn, relationBase, sqlDirection, type Embedding, type GeneratedQuery } from './sql-parts.ts';
import { utcTextColumn } from './timestamps.ts';

/** One term of a connection's order: what it orders by, and how its value is typed in a cursor. */
export interface ConnectionOrderTerm {
  term: OrderTerm;
  direction: 'asc' | 'desc';
  type: FieldType;
  nullable: boolean;
}

/**
 * The order of a relation's connection: the relation's documented order, then the target's key
 * when the order does not already end in it, so that every row has a unique position.
 */
export function connectionOrder(registry: ResourceRegistry, relation: RelationDefinition): ConnectionOrderTerm[] {
  const target = registry.get(relation.resource);
  const terms = [...(relation.orderBy ?? [])];
  if (!terms.some((term) => term.field === target.key)) {
    terms.push({ field: target.key, direction: terms.at(-1)?.direction ?? 'asc' });
  }
  return terms.map((term) => {
    const { type, nullable } = fieldDefinition(target, term.field);
    // A named list holds only rows whose listing column is set.
    return { term, direction: term.direction ?? 'asc', type, nullable: (nullable ?? false) && term.field !== relation.present };
  });
}

/** One condition of a connection's filter: `field operator value`. */
export type FilterTerm = readonly [field: string, operator: FilterOperator];

export interface ConnectionQueryOptions extends Embedding {
  /** The target's fields to read (its key is always read); all of them when omitted. */
  fields?: readonly string[];
  filter?: readonly FilterTerm[];
  /** With an `after` cursor: for each order term, whether the cursor's value is NULL. */
  after?: readonly boolean[];
  /** With a `before` cursor: the same. */
  before?: readonly boolean[];
  /** `last`: the rows nearest the end (or the `before` cursor), read in reverse order. */
  backward?: boolean;
  /** Whether the order's values are read, of which cursors are made; true when omitted. */
  cursors?: boolean;
  restricted?: boolean;
}

/**
 * One page of a relation for many parents at once: each parent key drives a LATERAL scan in the
 * connection's order that starts past the cursor (keyset pagination: no OFFSET, so a deep page
 * costs what the first one costs) and stops after the page size plus one row, which tells whether
 * another page follows. The values of the order terms come back as `__o0`, `__o1`, … for cursors,
 * unless none is wanted (`cursors: false`). Where its columns allow (`travelsAsJson`), each
 * parent's page comes back as one row, the page in `__page` as JSON (`jsonPage`, `pageAs: 'json'`);
 * else a row per page row.
 */
export function buildConnectionQuery(registry: ResourceRegistry, relation: RelationDefinition, options: ConnectionQueryOptions = {}): GeneratedQuery {
  const params = new ParameterList();
  const page = connectionPage(registry, relation, options, params, 'p.k');
  if (travelsAsJson(registry, relation)) {
    const json = jsonPage(registry, relation, page);
    const text = `SELECT p.k AS "${PARENT_COLUMN}", ${json.sql} AS "${PAGE_COLUMN}" FROM unnest($1::text[]) AS p(k)`;
    return { ...page, text, parameters: params.sources, pageAs: 'json', fromText: json.fromText };
  }
  const text = `SELECT p.k AS "${PARENT_COLUMN}", x.* FROM unnest($1::text[]) AS p(k) CROSS JOIN LATERAL (${page.text}) x`;
  return { ...page, text, parameters: params.sources };
}

/** The column of a row that holds a page as JSON (`jsonPage`). */
export const PAGE_COLUMN = '__page';

/**
 * A page can travel as JSON (`jsonPage`) when each column's text can be read back as the driver
 * reads the column: text, ids, enums, integers, booleans and timestamps (already UTC text). A
 * `float` may be `numeric` (the driver gives text) or `double precision` (a number), which the
 * field's type does not tell apart, so a page with one travels as rows.
 */
export function travelsAsJson(registry: ResourceRegistry, relation: RelationDefinition): boolean {
  const target = registry.get(relation.resource);
  const resources = [target, ...Object.values(target.relations ?? {}).map((one) => registry.get(one.resource))];
  return resources.every((resource) => Object.keys(resource.fields).every((field) => fieldDefinition(resource, field).type !== 'float'));
}

/**
 * A page (`connectionPage`) as the JSON text of an array of its rows, each the array of its
 * columns but `__parent` as text, in the page's order (ARRAY of a subquery keeps its ORDER BY,
 * which an aggregate over it is not bound to), and the columns whose text is read back as a number
 * or a boolean (`fromText`). As PostGraphile reads a nested list: one value for the driver to
 * decode and the server to send instead of a result row per page row. Text arrays made JSON by one
 * `array_to_json` cost PostgreSQL about a third of what `json_build_array` per row did (it looks
 * up each value's type on every call).
 */
export function jsonPage(registry: ResourceRegistry, relation: RelationDefinition, page: GeneratedQuery): { sql: string; fromText: Record<string, 'int' | 'boolean'> } {
  const target = registry.get(relation.resource);
  const order = connectionOrder(registry, relation);
  const typeOf = (name: string): FieldType => {
    const term = /^__o(\d+)$/.exec(name);
    if (term) return fieldDefinition(target, order[Number(term[1])]!.term.field).type;
    const dot = name.indexOf('.');
    if (dot === -1) return fieldDefinition(target, name).type;
    const one = registry.relation(target, name.slice(0, dot));
    return fieldDefinition(registry.get(one.resource), name.slice(dot + 1)).type;
  };
  const fromText: Record<string, 'int' | 'boolean'> = {};
  const values = page.columns.slice(1).map((name) => {
    const type = typeOf(name);
    if (type === 'int' || type === 'boolean') fromText[name] = type;
    // Ids, strings and timestamps (UTC text already) are text; enums and the rest are cast.
    return type === 'id' || type === 'string' || type === 'timestamp' ? `q."${name}"` : `q."${name}"::text`;
  });
  return { sql: `array_to_json(ARRAY(SELECT ARRAY[${values.join(', ')}] FROM (${page.text}) q))::text`, fromText };
}

/**
 * The page of one parent, the value of `parent` (an SQL expression): the LATERAL part of a
 * connection's statement. Its columns start with `__parent`, which its select list does not hold.
 */
export function connectionPage(registry: ResourceRegistry, relation: RelationDefinition, options: ConnectionQueryOptions, params: ParameterList, parent: string): GeneratedQuery {
  const base = relationBase(registry, relation, params, options, options.fields, options.restricted ?? false);
  const { target, conditions } = base;
  const order = connectionOrder(registry, relation);
  const expression = (index: number) => `t.${columnOf(target, order[index]!.term.field)}`;

  const selected = [...base.selected];
  const columns = [...base.columns];
  order.forEach((term, index) => {
    if (options.cursors === false) return;
    const value = term.type === 'timestamp' ? utcTextColumn(expression(index)) : expression(index);
    selected.push(`${value} AS "${orderColumn(index)}"`);
    columns.push(orderColumn(index));
  });
  for (const [field, operator] of options.filter ?? []) conditions.push(filterCondition(target, field, operator, params));
  if (options.after) conditions.push(keysetCondition(order, expression, options.after, 'after', params));
  if (options.before) conditions.push(keysetCondition(order, expression, options.before, 'before', params));
  const orderBy = order.map((term, index) => `${expression(index)} ${sqlDirection(options.backward ? flip(term.direction) : term.direction)}`);
  const limit = params.add({ from: 'limit' });
  const where = [`t.${base.foreign} = ${parent}`, ...conditions].join(' AND ');
  const text = `SELECT ${selected.join(', ')} FROM ${base.from} WHERE ${where} ORDER BY ${orderBy.join(', ')} LIMIT ${limit}`;
  return { text, columns, timestamps: base.timestamps, parameters: params.sources, embeds: base.embeds };
}

/** A timestamp travels as UTC text (cursors) or ISO 8601 with a zone (filters); both are cast to an exact instant. */
function valueSql(placeholder: string, type: FieldType, source: 'cursor' | 'filter'): string {
  if (type !== 'timestamp') return placeholder;
  return source === 'cursor' ? `(${placeholder}::timestamp AT TIME ZONE 'UTC')` : `${placeholder}::timestamptz`;
}

const COMPARISON: Record<Exclude<FilterOperator, 'eq' | 'in'>, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

export function filterCondition(target: ResourceDefinition, field: string, operator: FilterOperator, params: ParameterList): string {
  const { column, type } = fieldDefinition(target, field);
  const placeholder = params.add({ from: 'filter', field, operator });
  if (operator === 'in') return `t.${column} = ANY(${placeholder})`;
  return `t.${column} ${operator === 'eq' ? '=' : COMPARISON[operator]} ${valueSql(placeholder, type, 'filter')}`;
}

/**
 * The rows strictly after (or before) a cursor in the connection's order. Non-null terms in one
 * direction compare as one row value, `(a, b) > ($2, $3)`, which an index on those columns serves
 * as a range; otherwise term by term, with NULLs where ORDER BY puts them (last ascending, first
 * descending). Which cursor values are NULL is part of the statement, so no parameter is ever
 * compared with NULL.
 */
function keysetCondition(
  order: readonly ConnectionOrderTerm[],
  expression: (index: number) => string,
  nulls: readonly boolean[],
  side: 'after' | 'before',
  params: ParameterList,
): string {
  const value = (index: number) => valueSql(params.add({ from: side, index }), order[index]!.type, 'cursor');
  const direction = (index: number) => (side === 'after' ? order[index]!.direction : flip(order[index]!.direction));
  const uniform = order.every((term) => !term.nullable && term.direction === order[0]!.direction);
  if (uniform) {
    const operator = direction(0) === 'asc' ? '>' : '<';
    return `(${order.map((_, index) => expression(index)).join(', ')}) ${operator} (${order.map((_, index) => value(index)).join(', ')})`;
  }
  const alternatives: string[] = [];
  for (let i = 0; i < order.length; i += 1) {
    // Ascending puts NULLs last: nothing lies beyond a NULL.
    if (direction(i) === 'asc' && nulls[i]) continue;
    const equal = Array.from({ length: i }, (_, j) => (nulls[j] ? `${expression(j)} IS NULL` : `${expression(j)} = ${value(j)}`));
    alternatives.push(`(${[...equal, termBeyond(order[i]!, expression(i), nulls[i]!, direction(i), () => value(i))].join(' AND ')})`);
  }
  return alternatives.length > 0 ? `(${alternatives.join(' OR ')})` : 'false';
}

/** `expression` lies strictly beyond the cursor's value in `direction` (never called for a NULL ascending). */
function termBeyond(term: ConnectionOrderTerm, expression: string, isNull: boolean, direction: 'asc' | 'desc', value: () => string): string {
  // Ascending puts NULLs last: every NULL lies beyond a value.
  if (direction === 'asc') return term.nullable ? `(${expression} > ${value()} OR ${expression} IS NULL)` : `${expression} > ${value()}`;
  // Descending puts NULLs first: every value lies beyond a NULL.
  if (isNull) return `${expression} IS NOT NULL`;
  return `${expression} < ${value()}`;
}

/** How many rows of a relation each parent has under a filter (a connection's `totalCount`), for many parents at once. */
export function buildCountQuery(registry: ResourceRegistry, relation: RelationDefinition, options: { filter?: readonly FilterTerm[]; restricted?: boolean } = {}): GeneratedQuery {
  const params = new ParameterList();
  const base = relationBase(registry, relation, params, {}, [], options.restricted ?? false);
  for (const [field, operator] of options.filter ?? []) base.conditions.push(filterCondition(base.target, field, operator, params));
  const where = [`t.${base.foreign} = ANY($1)`, ...base.conditions].join(' AND ');
  return {
    text: `SELECT t.${base.foreign} AS "${PARENT_COLUMN}", count(*) AS "${COUNT_COLUMN}" FROM ${base.target.table} t WHERE ${where} GROUP BY t.${base.foreign}`,
    columns: [PARENT_COLUMN, COUNT_COLUMN],
    timestamps: [],
    parameters: params.sources,
    embeds: [],
  };
}

