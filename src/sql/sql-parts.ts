/**
 * The pieces every generated statement is made of: parameter numbering, select lists (timestamps
 * as UTC text), a relation's target with its embedded one-relations and conditions, and workspace
 * restrictions.
 */
import { columnOf, fieldDefinition, type FilterOperator, type RelationDefinition, type ResourceDefinition, type ResourceRegistry } from '../model/resource-registry.ts';
import { isoFromUtcText, utcTextColumn } from './timestamps.ts';

/** Where the value of one statement parameter comes from. */
export type ParameterSource =
  /** The workspaces a restricted token may read. */
  | { from: 'workspaces' }
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
  /**
   * `json`: a row per parent, `[__parent, page]`, the page the JSON text of an array of its rows,
   * each the array of `columns` but `__parent` (connection-sql.ts, `jsonPage`). Else a row per row.
   */
  pageAs?: 'json';
  /** The columns of a JSON page read back from text as a number or a boolean. */
  fromText?: Readonly<Record<string, 'int' | 'boolean'>>;
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
 * A one-relation can be read with its parent through a LEFT JOIN when that cannot multiply the
 * parent's rows: it matches the target's key.
 */
export function embeddable(registry: ResourceRegistry, owner: ResourceDefinition, relationName: string): boolean {
  const relation = owner.relations?.[relationName];
  if (!relation || relation.kind !== 'one') return false;
  return registry.get(relation.resource).key === relation.foreignField;
}

/** What the statements of one relation share: the target's columns, embedded one-relations and conditions. */
export interface RelationBase {
  target: ResourceDefinition;
  foreign: string;
  selected: string[];
  columns: string[];
  timestamps: string[];
  embeds: EmbeddedRelation[];
  from: string;
  conditions: string[];
}

/** Which one-relations of the target a statement reads with it, and which of their fields (all of them when a relation is not named). */
export interface Embedding {
  embedded?: readonly string[] | undefined;
  embeddedFields?: Readonly<Record<string, readonly string[]>> | undefined;
}

export function relationBase(
  registry: ResourceRegistry,
  relation: RelationDefinition,
  params: ParameterList,
  embedding: Embedding,
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

  (embedding.embedded ?? []).forEach((name, index) => {
    if (!embeddable(registry, target, name)) throw new Error(`${target.name}.${name} cannot be embedded`);
    const one = registry.relation(target, name);
    const joined = registry.get(one.resource);
    const alias = `e${index + 1}`;
    const on = [`${alias}.${columnOf(joined, one.foreignField)} = t.${columnOf(target, one.localField)}`];
    // Another workspace's row reads as no row, exactly as if it did not exist.
    const restriction = restricted ? workspaceCondition(joined, alias, params) : null;
    if (restriction) on.push(restriction);
    joins.push(` LEFT JOIN ${joined.table} ${alias} ON ${on.join(' AND ')}`);
    const only = embedding.embeddedFields?.[name];
    const read = only && new Set([joined.key, ...only]);
    const list = selectList(joined, alias, `${name}.`, read);
    selected.push(list.sql);
    columns.push(...list.names);
    timestamps.push(...list.timestamps);
    embeds.push({
      relation: name,
      keyAlias: `${name}.${joined.key}`,
      fields: Object.keys(joined.fields)
        .filter((field) => !read || read.has(field))
        .map((field) => [`${name}.${field}`, field]),
    });
  });

  // A named list: the rows whose listing column is set (see the overlay's `lists`).
  if (relation.present !== undefined) conditions.push(`t.${columnOf(target, relation.present)} IS NOT NULL`);
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

export const flip = (direction: 'asc' | 'desc'): 'asc' | 'desc' => (direction === 'asc' ? 'desc' : 'asc');
export const sqlDirection = (direction: 'asc' | 'desc' | undefined) => (direction === 'desc' ? 'DESC' : 'ASC');

/** `alias.workspace = ANY($n)` for a resource that carries a workspace; null for one that does not. */
export function workspaceCondition(resource: ResourceDefinition, alias: string, params: ParameterList): string | null {
  if (!resource.workspaceField) return null;
  return `${alias}.${columnOf(resource, resource.workspaceField)} = ANY(${params.add({ from: 'workspaces' })})`;
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

export function selectList(resource: ResourceDefinition, alias: string, prefix = '', only?: ReadonlySet<string>): { sql: string; names: string[]; timestamps: string[] } {
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
export class ParameterList {
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
