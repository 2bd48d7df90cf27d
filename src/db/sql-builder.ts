import {
  columnOf,
  fieldDefinition,
  type AggregateOrderTerm,
  type FieldType,
  type FilterOperator,
  type OrderTerm,
  type RelationDefinition,
  type RelationFilter,
  type ResourceDefinition,
  type ResourceRegistry,
  type Scalar,
} from './resource-registry.ts';
import { isoFromUtcText, utcTextColumn } from './timestamps.ts';

/** Where the value of one statement parameter comes from. */
export type ParameterSource =
  /** A fixed value of the registry (a `where` clause). */
  | { from: 'fixed'; value: Scalar }
  /** The workspaces a restricted token may read. */
  | { from: 'workspaces' }
  /** A GraphQL argument of the relation (`arguments`). */
  | { from: 'argument'; name: string }
  | { from: 'filter'; field: string; operator: FilterOperator }
  /** The value of order term `index` in the `after` or `before` cursor. */
  | { from: 'after' | 'before'; index: number }
  /** The per-parent row limit. */
  | { from: 'limit' };

/** A generated statement: `$1` is always the array of lookup keys; `parameters` say what fills `$2…`. */
export interface GeneratedQuery {
  text: string;
  /** The names of the result columns, in order (for rows read as arrays). */
  columns: string[];
  /** The columns that hold a timestamp as UTC text, to be read with `isoFromUtcText`. */
  timestamps: string[];
  /** The sources of `$2`, `$3`, … in order. */
  parameters: ParameterSource[];
  /** One-relations of the target read in the same statement (LEFT JOIN), see `embeddable`. */
  embeds: EmbeddedRelation[];
}

/** A one-relation whose row comes back inside its parent's row, its columns aliased `relation.field`. */
export interface EmbeddedRelation {
  relation: string;
  /** The alias of the joined key: null when the parent has no such row. */
  keyAlias: string;
  /** [column alias, field] of every field of the joined resource. */
  fields: Array<[string, string]>;
}

export const PARENT_COLUMN = '__parent';

/** The column of a connection row that holds the value of its order term `index` (for its cursor). */
export const orderColumn = (index: number) => `__o${index}`;

/** The column of a count statement's rows. */
export const COUNT_COLUMN = 'count';

/**
 * `SELECT … FROM table WHERE field = ANY($1)`: rows of one resource by any of its fields. For a
 * token restricted to some workspaces, only rows of those workspaces.
 */
export function buildLookup(resource: ResourceDefinition, field: string, restricted = false): GeneratedQuery {
  const params = new ParameterList();
  const column = columnOf(resource, field);
  const list = selectList(resource, 't');
  const restriction = restricted ? workspaceCondition(resource, 't', params) : null;
  return {
    text: `SELECT t.${column} AS "${PARENT_COLUMN}", ${list.sql} FROM ${resource.table} t WHERE t.${column} = ANY($1)${restriction ? ` AND ${restriction}` : ''}`,
    columns: [PARENT_COLUMN, ...list.names],
    timestamps: list.timestamps,
    parameters: params.sources,
    embeds: [],
  };
}

/**
 * A one-relation can be read with its parent through a LEFT JOIN when that cannot multiply the
 * parent's rows (it matches the target's key) and it takes no arguments, limit or required rows.
 */
export function embeddable(registry: ResourceRegistry, owner: ResourceDefinition, relationName: string): boolean {
  const relation = owner.relations?.[relationName];
  if (!relation || relation.kind !== 'one') return false;
  if (relation.arguments || relation.limit || relation.requires) return false;
  return registry.get(relation.resource).key === relation.foreignField;
}

/** What the statements of one relation share: the target's columns, embedded one-relations and fixed conditions. */
interface RelationBase {
  target: ResourceDefinition;
  foreign: string;
  selected: string[];
  columns: string[];
  timestamps: string[];
  embeds: EmbeddedRelation[];
  from: string;
  conditions: string[];
}

function relationBase(
  registry: ResourceRegistry,
  relation: RelationDefinition,
  params: ParameterList,
  embedded: readonly string[],
  fields: readonly string[] | undefined,
  restricted: boolean,
): RelationBase {
  const target = registry.get(relation.resource);
  const conditions: string[] = [];
  const joins: string[] = [];
  const embeds: EmbeddedRelation[] = [];
  const own = selectList(target, 't', '', fields && new Set([target.key, ...fields]));
  const selected = [own.sql];
  const columns = [PARENT_COLUMN, ...own.names];
  const timestamps = [...own.timestamps];

  embedded.forEach((name, index) => {
    if (!embeddable(registry, target, name)) throw new Error(`${target.name}.${name} cannot be embedded`);
    const one = registry.relation(target, name);
    const joined = registry.get(one.resource);
    const alias = `e${index + 1}`;
    const on = [`${alias}.${columnOf(joined, one.foreignField)} = t.${columnOf(target, one.localField)}`];
    for (const [field, value] of Object.entries(one.where ?? {})) on.push(`${alias}.${columnOf(joined, field)} = ${params.add({ from: 'fixed', value })}`);
    // Another workspace's row reads as no row, exactly as if it did not exist.
    const restriction = restricted ? workspaceCondition(joined, alias, params) : null;
    if (restriction) on.push(restriction);
    joins.push(` LEFT JOIN ${joined.table} ${alias} ON ${on.join(' AND ')}`);
    const list = selectList(joined, alias, `${name}.`);
    selected.push(list.sql);
    columns.push(...list.names);
    timestamps.push(...list.timestamps);
    embeds.push({
      relation: name,
      keyAlias: `${name}.${joined.key}`,
      fields: Object.keys(joined.fields).map((field) => [`${name}.${field}`, field]),
    });
  });

  for (const [field, value] of Object.entries(relation.where ?? {})) {
    conditions.push(`t.${columnOf(target, field)} = ${params.add({ from: 'fixed', value })}`);
  }
  for (const filter of relation.requires ?? []) {
    conditions.push(`EXISTS (${relatedRowsSql(registry, target, filter, params, 'SELECT 1')})`);
  }
  const restriction = restricted ? workspaceCondition(target, 't', params) : null;
  if (restriction) conditions.push(restriction);
  return {
    target,
    foreign: columnOf(target, relation.foreignField),
    selected,
    columns,
    timestamps,
    embeds,
    from: `${target.table} t${joins.join('')}`,
    conditions,
  };
}

/**
 * The rows of a relation for many parents at once. Without a limit it is one `= ANY($1)` scan;
 * with a per-parent limit each parent key drives a LATERAL index scan that stops at the limit.
 */
export function buildRelationQuery(
  registry: ResourceRegistry,
  relation: RelationDefinition,
  presentArguments: readonly string[],
  embedded: readonly string[] = [],
  /** The target's fields to read (its key is always read); all of them when omitted. */
  fields?: readonly string[],
  /** Only rows of the workspaces a restricted token may read. */
  restricted = false,
): GeneratedQuery {
  const params = new ParameterList();
  const base = relationBase(registry, relation, params, embedded, fields, restricted);
  const { target, conditions } = base;
  const order = (relation.orderBy ?? []).map((term) => `${orderExpression(registry, target, term, params)} ${sqlDirection(term.direction)}`);
  const orderClause = order.length > 0 ? ` ORDER BY ${order.join(', ')}` : '';
  for (const name of presentArguments) {
    const argument = relation.arguments?.[name];
    if (!argument) continue;
    conditions.push(`t.${columnOf(target, argument.field)} = ANY(${params.add({ from: 'argument', name })})`);
  }

  let text: string;
  if (relation.limit) {
    const limit = params.add({ from: 'limit' });
    const where = [`t.${base.foreign} = p.k`, ...conditions].join(' AND ');
    text =
      `SELECT p.k AS "${PARENT_COLUMN}", x.* FROM unnest($1::text[]) AS p(k) CROSS JOIN LATERAL ` +
      `(SELECT ${base.selected.join(', ')} FROM ${base.from} WHERE ${where}${orderClause} LIMIT ${limit}) x`;
  } else {
    const where = [`t.${base.foreign} = ANY($1)`, ...conditions].join(' AND ');
    text = `SELECT t.${base.foreign} AS "${PARENT_COLUMN}", ${base.selected.join(', ')} FROM ${base.from} WHERE ${where}${orderClause}`;
  }
  return { text, columns: base.columns, timestamps: base.timestamps, parameters: params.sources, embeds: base.embeds };
}

/** One term of a connection's order: what it orders by, and how its value is typed in a cursor. */
export interface ConnectionOrderTerm {
  term: OrderTerm | AggregateOrderTerm;
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
  if (!terms.some((term) => !('aggregate' in term) && term.field === target.key)) {
    terms.push({ field: target.key, direction: terms.at(-1)?.direction ?? 'asc' });
  }
  return terms.map((term) => {
    const direction = term.direction ?? 'asc';
    if (!('aggregate' in term)) {
      const { type, nullable } = fieldDefinition(target, term.field);
      return { term, direction, type, nullable: nullable ?? false };
    }
    if (term.aggregate === 'count') return { term, direction, type: 'int', nullable: false };
    const nested = registry.relation(target, term.relation);
    const aggregated = fieldDefinition(registry.get(nested.resource), term.field);
    // min/max of no rows is NULL, unless the relation requires such rows to exist.
    const guaranteed = (relation.requires ?? []).some((required) => required.relation === term.relation && sameWhere(required.where, term.where));
    return { term, direction, type: aggregated.type, nullable: !guaranteed || (aggregated.nullable ?? false) };
  });
}

/** One condition of a connection's filter: `field operator value`. */
export type FilterTerm = readonly [field: string, operator: FilterOperator];

export interface ConnectionQueryOptions {
  embedded?: readonly string[];
  /** The target's fields to read (its key is always read); all of them when omitted. */
  fields?: readonly string[];
  filter?: readonly FilterTerm[];
  /** With an `after` cursor: for each order term, whether the cursor's value is NULL. */
  after?: readonly boolean[];
  /** With a `before` cursor: the same. */
  before?: readonly boolean[];
  /** `last`: the rows nearest the end (or the `before` cursor), read in reverse order. */
  backward?: boolean;
  restricted?: boolean;
}

/**
 * One page of a relation for many parents at once: each parent key drives a LATERAL scan in the
 * connection's order that starts past the cursor (keyset pagination: no OFFSET, so a deep page
 * costs what the first one costs) and stops after the page size plus one row, which tells whether
 * another page follows. The values of the order terms come back as `__o0`, `__o1`, … for cursors.
 */
export function buildConnectionQuery(registry: ResourceRegistry, relation: RelationDefinition, options: ConnectionQueryOptions = {}): GeneratedQuery {
  const params = new ParameterList();
  const base = relationBase(registry, relation, params, options.embedded ?? [], options.fields, options.restricted ?? false);
  const { target, conditions } = base;
  const order = connectionOrder(registry, relation);
  const expression = (index: number) => orderExpression(registry, target, order[index]!.term, params);

  const selected = [...base.selected];
  const columns = [...base.columns];
  order.forEach((term, index) => {
    const value = term.type === 'timestamp' ? utcTextColumn(expression(index)) : expression(index);
    selected.push(`${value} AS "${orderColumn(index)}"`);
    columns.push(orderColumn(index));
  });
  for (const [field, operator] of options.filter ?? []) conditions.push(filterCondition(target, field, operator, params));
  if (options.after) conditions.push(keysetCondition(order, expression, options.after, 'after', params));
  if (options.before) conditions.push(keysetCondition(order, expression, options.before, 'before', params));
  const orderBy = order.map((term, index) => `${expression(index)} ${sqlDirection(options.backward ? flip(term.direction) : term.direction)}`);
  const limit = params.add({ from: 'limit' });
  const where = [`t.${base.foreign} = p.k`, ...conditions].join(' AND ');
  const text =
    `SELECT p.k AS "${PARENT_COLUMN}", x.* FROM unnest($1::text[]) AS p(k) CROSS JOIN LATERAL ` +
    `(SELECT ${selected.join(', ')} FROM ${base.from} WHERE ${where} ORDER BY ${orderBy.join(', ')} LIMIT ${limit}) x`;
  return { text, columns, timestamps: base.timestamps, parameters: params.sources, embeds: base.embeds };
}

/** How many rows of a relation each parent has under a filter (a connection's `totalCount`), for many parents at once. */
export function buildCountQuery(registry: ResourceRegistry, relation: RelationDefinition, filter: readonly FilterTerm[] = [], restricted = false): GeneratedQuery {
  const params = new ParameterList();
  const base = relationBase(registry, relation, params, [], [], restricted);
  for (const [field, operator] of filter) base.conditions.push(filterCondition(base.target, field, operator, params));
  const where = [`t.${base.foreign} = ANY($1)`, ...base.conditions].join(' AND ');
  return {
    text: `SELECT t.${base.foreign} AS "${PARENT_COLUMN}", count(*) AS "${COUNT_COLUMN}" FROM ${base.target.table} t WHERE ${where} GROUP BY t.${base.foreign}`,
    columns: [PARENT_COLUMN, COUNT_COLUMN],
    timestamps: [],
    parameters: params.sources,
    embeds: [],
  };
}

/** A timestamp travels as UTC text (cursors) or ISO 8601 with a zone (filters); both are cast to an exact instant. */
function valueSql(placeholder: string, type: FieldType, source: 'cursor' | 'filter'): string {
  if (type !== 'timestamp') return placeholder;
  return source === 'cursor' ? `(${placeholder}::timestamp AT TIME ZONE 'UTC')` : `${placeholder}::timestamptz`;
}

const COMPARISON: Record<Exclude<FilterOperator, 'eq' | 'in'>, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

function filterCondition(target: ResourceDefinition, field: string, operator: FilterOperator, params: ParameterList): string {
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

const flip = (direction: 'asc' | 'desc'): 'asc' | 'desc' => (direction === 'asc' ? 'desc' : 'asc');
const sqlDirection = (direction: 'asc' | 'desc' | undefined) => (direction === 'desc' ? 'DESC' : 'ASC');

function sameWhere(a: Record<string, Scalar> | undefined, b: Record<string, Scalar> | undefined): boolean {
  const left = Object.entries(a ?? {});
  return left.length === Object.keys(b ?? {}).length && left.every(([field, value]) => b?.[field] === value);
}

/** `alias.workspace = ANY($n)` for a resource that carries a workspace; null for one that does not. */
function workspaceCondition(resource: ResourceDefinition, alias: string, params: ParameterList): string | null {
  if (!resource.workspaceField) return null;
  return `${alias}.${columnOf(resource, resource.workspaceField)} = ANY(${params.add({ from: 'workspaces' })})`;
}

function relatedRowsSql(
  registry: ResourceRegistry,
  owner: ResourceDefinition,
  filter: RelationFilter,
  params: ParameterList,
  select: string,
): string {
  const relation = registry.relation(owner, filter.relation);
  const related = registry.get(relation.resource);
  const alias = params.alias();
  const conditions = [`${alias}.${columnOf(related, relation.foreignField)} = t.${columnOf(owner, relation.localField)}`];
  for (const [field, value] of Object.entries({ ...relation.where, ...filter.where })) {
    conditions.push(`${alias}.${columnOf(related, field)} = ${params.add({ from: 'fixed', value })}`);
  }
  return `${select.replaceAll('$alias', alias)} FROM ${related.table} ${alias} WHERE ${conditions.join(' AND ')}`;
}

/** What an order term orders by: a column, or an aggregate over a relation's rows. */
function orderExpression(registry: ResourceRegistry, target: ResourceDefinition, term: OrderTerm | AggregateOrderTerm, params: ParameterList): string {
  if (!('aggregate' in term)) return `t.${columnOf(target, term.field)}`;
  const relation = registry.relation(target, term.relation);
  const related = registry.get(relation.resource);
  const select = `SELECT ${term.aggregate}($alias.${columnOf(related, term.field)})`;
  const filter: RelationFilter = term.where ? { relation: term.relation, where: term.where } : { relation: term.relation };
  return `(${relatedRowsSql(registry, target, filter, params, select)})`;
}

/**
 * How a statement outside the registry (a key lookup) reads one row of a resource alongside its
 * own columns, exactly as the loaders would read it (timestamps as UTC text, see
 * `isoFromUtcText`), so that the row can answer the loaders' lookup of its key.
 */
export interface JoinedResource {
  readonly table: string;
  /** The column of the resource's key. */
  readonly keyColumn: string;
  /** The select list of every field, each aliased `prefix` + field name. */
  columns(alias: string, prefix: string): string;
  /** The resource's row from a result row read with `columns`. */
  row(result: Record<string, unknown>, prefix: string): Record<string, unknown>;
}

export function joinedResource(resource: ResourceDefinition): JoinedResource {
  const timestamps = timestampFields(resource);
  return {
    table: resource.table,
    keyColumn: columnOf(resource, resource.key),
    columns: (alias, prefix) => selectList(resource, alias, prefix).sql,
    row: (result, prefix) =>
      Object.fromEntries(
        Object.keys(resource.fields).map((field) => {
          const value = result[`${prefix}${field}`];
          return [field, timestamps.has(field) ? isoFromUtcText(value) : value];
        }),
      ),
  };
}

function timestampFields(resource: ResourceDefinition): ReadonlySet<string> {
  return new Set(Object.keys(resource.fields).filter((field) => fieldDefinition(resource, field).type === 'timestamp'));
}

function selectList(resource: ResourceDefinition, alias: string, prefix = '', only?: ReadonlySet<string>): { sql: string; names: string[]; timestamps: string[] } {
  const timestamps = timestampFields(resource);
  const entries = Object.keys(resource.fields)
    .filter((field) => !only || only.has(field))
    .map((field) => [field, columnOf(resource, field)] as const);
  return {
    sql: entries
      .map(([field, column]) =>
        timestamps.has(field) ? `${utcTextColumn(`${alias}.${column}`)} AS "${prefix}${field}"` : `${alias}.${column} AS "${prefix}${field}"`,
      )
      .join(', '),
    names: entries.map(([field]) => `${prefix}${field}`),
    timestamps: entries.filter(([field]) => timestamps.has(field)).map(([field]) => `${prefix}${field}`),
  };
}

/** The parameters of one statement, numbered from `$2` (`$1` is the lookup keys), with where each value comes from. */
class ParameterList {
  readonly sources: ParameterSource[] = [];
  #aliases = 0;

  add(source: ParameterSource): string {
    this.sources.push(source);
    return `$${this.sources.length + 1}`;
  }

  alias(): string {
    this.#aliases += 1;
    return `r${this.#aliases}`;
  }
}
