import type {
  AggregateOrderTerm,
  OrderTerm,
  RelationDefinition,
  RelationFilter,
  ResourceDefinition,
  ResourceRegistry,
  Scalar,
} from './resource.ts';
import { isoFromUtcText, utcTextColumn } from './timestamps.ts';

/** A generated statement: `$1` is always the array of lookup keys; `values` fill `$2…`. */
export interface GeneratedQuery {
  text: string;
  /** The names of the result columns, in order (for rows read as arrays). */
  columns: string[];
  /** The columns that hold a timestamp as UTC text, to be read with `isoFromUtcText`. */
  timestamps: string[];
  /** Fixed parameter values (from `where` clauses), in order, after the keys. */
  fixedValues: Scalar[];
  /** Names of the GraphQL arguments bound after the fixed values, in order. */
  argumentOrder: string[];
  /** Whether the per-parent limit is bound last. */
  hasLimit: boolean;
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

/** `SELECT … FROM table WHERE field = ANY($1)`: rows of one resource by any of its fields. */
export function buildLookup(resource: ResourceDefinition, field: string): GeneratedQuery {
  const column = columnOf(resource, field);
  const list = selectList(resource, 't');
  return {
    text: `SELECT t.${column} AS "${PARENT_COLUMN}", ${list.sql} FROM ${resource.table} t WHERE t.${column} = ANY($1)`,
    columns: [PARENT_COLUMN, ...list.names],
    timestamps: list.timestamps,
    fixedValues: [],
    argumentOrder: [],
    hasLimit: false,
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
): GeneratedQuery {
  const target = registry.get(relation.resource);
  const params = new ParameterList(1);
  const foreign = columnOf(target, relation.foreignField);
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
    for (const [field, value] of Object.entries(one.where ?? {})) on.push(`${alias}.${columnOf(joined, field)} = ${params.fixed(value)}`);
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
  const from = `${target.table} t${joins.join('')}`;

  for (const [field, value] of Object.entries(relation.where ?? {})) {
    conditions.push(`t.${columnOf(target, field)} = ${params.fixed(value)}`);
  }
  for (const filter of relation.requires ?? []) {
    conditions.push(`EXISTS (${relatedRowsSql(registry, target, filter, params, 'SELECT 1')})`);
  }
  // Aggregates may bind fixed values, so ordering is generated before the arguments.
  const order = (relation.orderBy ?? []).map((term) => orderSql(registry, target, term, params));
  const orderClause = order.length > 0 ? ` ORDER BY ${order.join(', ')}` : '';
  const argumentOrder: string[] = [];
  for (const name of presentArguments) {
    const argument = relation.arguments?.[name];
    if (!argument) continue;
    argumentOrder.push(name);
    conditions.push(`t.${columnOf(target, argument.field)} = ANY(${params.argument()})`);
  }

  let text: string;
  if (relation.limit) {
    const limit = params.argument();
    const where = [`t.${foreign} = p.k`, ...conditions].join(' AND ');
    text =
      `SELECT p.k AS "${PARENT_COLUMN}", x.* FROM unnest($1::text[]) AS p(k) CROSS JOIN LATERAL ` +
      `(SELECT ${selected.join(', ')} FROM ${from} WHERE ${where}${orderClause} LIMIT ${limit}) x`;
  } else {
    const where = [`t.${foreign} = ANY($1)`, ...conditions].join(' AND ');
    text = `SELECT t.${foreign} AS "${PARENT_COLUMN}", ${selected.join(', ')} FROM ${from} WHERE ${where}${orderClause}`;
  }
  return { text, columns, timestamps, fixedValues: params.fixedValues, argumentOrder, hasLimit: Boolean(relation.limit), embeds };
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
    conditions.push(`${alias}.${columnOf(related, field)} = ${params.fixed(value)}`);
  }
  return `${select.replaceAll('$alias', alias)} FROM ${related.table} ${alias} WHERE ${conditions.join(' AND ')}`;
}

function orderSql(
  registry: ResourceRegistry,
  target: ResourceDefinition,
  term: OrderTerm | AggregateOrderTerm,
  params: ParameterList,
): string {
  const direction = term.direction === 'desc' ? 'DESC' : 'ASC';
  if (!('aggregate' in term)) return `t.${columnOf(target, term.field)} ${direction}`;
  const relation = registry.relation(target, term.relation);
  const related = registry.get(relation.resource);
  const select = `SELECT ${term.aggregate}($alias.${columnOf(related, term.field)})`;
  const filter: RelationFilter = term.where ? { relation: term.relation, where: term.where } : { relation: term.relation };
  return `(${relatedRowsSql(registry, target, filter, params, select)}) ${direction}`;
}

/**
 * The columns of a resource as its loaders read them (timestamps as UTC text, see
 * `isoFromUtcText`), for a statement of the data layer that reads one of its rows alongside other
 * data; `prefix` goes before each name.
 */
export function resourceColumns(resource: ResourceDefinition, alias: string, prefix = ''): string {
  return selectList(resource, alias, prefix).sql;
}

/** The resource's row as its loaders would build it, from a result row read with `resourceColumns`. */
export function resourceRow(resource: ResourceDefinition, row: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  const timestamps = new Set(resource.timestamps ?? []);
  return Object.fromEntries(
    Object.keys(resource.fields).map((field) => {
      const value = row[`${prefix}${field}`];
      return [field, timestamps.has(field) ? isoFromUtcText(value) : value];
    }),
  );
}

function selectList(resource: ResourceDefinition, alias: string, prefix = '', only?: ReadonlySet<string>): { sql: string; names: string[]; timestamps: string[] } {
  const timestamps = new Set(resource.timestamps ?? []);
  const entries = Object.entries(resource.fields).filter(([field]) => !only || only.has(field));
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

function columnOf(resource: ResourceDefinition, field: string): string {
  const column = resource.fields[field];
  if (!column) throw new Error(`${resource.name} has no field ${field}`);
  return column;
}

class ParameterList {
  readonly fixedValues: Scalar[] = [];
  #next: number;
  #aliases = 0;
  #argumentsStarted = false;

  constructor(used: number) {
    this.#next = used + 1;
  }

  fixed(value: Scalar): string {
    if (this.#argumentsStarted) throw new Error('Fixed values must be bound before arguments');
    this.fixedValues.push(value);
    return `$${this.#next++}`;
  }

  argument(): string {
    this.#argumentsStarted = true;
    return `$${this.#next++}`;
  }

  alias(): string {
    this.#aliases += 1;
    return `r${this.#aliases}`;
  }
}
