import { PAGE_COLUMN, connectionPage, filterCondition, jsonPage, travelsAsJson, type ConnectionQueryOptions, type FilterTerm } from './connection-sql.ts';
import { columnOf, type RelationDefinition, type ResourceDefinition, type ResourceRegistry } from '../model/resource-registry.ts';
import { PARENT_COLUMN, ParameterList, relationBase, selectList, sqlDirection, workspaceCondition, type Embedding, type GeneratedQuery } from './sql-parts.ts';

/**
 * The statements the loaders run, generated from the resource registry: lookups, relations (here),
 * connection pages and counts (connection-sql.ts); the pieces they share are in sql-parts.ts.
 */
export { PAGE_COLUMN, buildConnectionQuery, buildCountQuery, connectionOrder, type ConnectionOrderTerm, type ConnectionQueryOptions, type FilterTerm } from './connection-sql.ts';
export {
  COUNT_COLUMN,
  PARENT_COLUMN,
  embeddable,
  joinedResource,
  orderColumn,
  type EmbeddedRelation,
  type Embedding,
  type GeneratedQuery,
  type JoinedResource,
  type ParameterSource,
} from './sql-parts.ts';

/**
 * `SELECT … FROM table WHERE field = ANY($1)`: rows of one resource by any of its fields. For a
 * token restricted to some workspaces, only rows of those workspaces.
 */
export function buildLookup(resource: ResourceDefinition, field: string, options: { restricted?: boolean; fields?: readonly string[] } = {}): GeneratedQuery {
  const params = new ParameterList();
  const column = columnOf(resource, field);
  const list = selectList(resource, 't', '', options.fields && new Set([resource.key, ...options.fields]));
  const restriction = options.restricted ? workspaceCondition(resource, 't', params) : null;
  return {
    text: `SELECT t.${column} AS "${PARENT_COLUMN}", ${list.sql} FROM ${resource.table} t WHERE t.${column} = ANY($1)${restriction ? ` AND ${restriction}` : ''}`,
    columns: [PARENT_COLUMN, ...list.names],
    timestamps: list.timestamps,
    parameters: params.sources,
    embeds: [],
  };
}

/** A lookup's statement that reads one connection page of each row found with it (`buildLookupWithPage`). */
export interface LookupWithPage extends GeneratedQuery {
  /**
   * `rows`: a row of the lookup per page row, the page's columns from `pageFrom` on (NULL when the
   * page is empty); `json`: one row per row found, its page at `pageFrom` as the JSON text of an
   * array of column arrays, in the page's order.
   */
  pageRead: 'rows' | 'json';
  /** The lookup's columns: `columns` up to this index; the page's from it on. */
  pageFrom: number;
  /** The page's columns, `__parent` first as a connection's statement has them (a JSON page's arrays hold them from the second on). */
  page: GeneratedQuery;
}

/**
 * A lookup (`buildLookup`) and, in the same statement, one connection page of each row it finds
 * (`buildConnectionQuery`'s LATERAL scan, its parent the row's `relation.localField`). Both parts
 * are restricted to the token's workspaces as they are apart. The page comes back as one JSON
 * value per row found where its columns allow (`travelsAsJson`), as PostGraphile reads a nested
 * list: one result row instead of one per page row, for the driver to decode and the server to send.
 */
export function buildLookupWithPage(
  registry: ResourceRegistry,
  resource: ResourceDefinition,
  field: string,
  lookup: { restricted?: boolean; fields?: readonly string[] },
  relation: RelationDefinition,
  connection: ConnectionQueryOptions,
): LookupWithPage {
  const params = new ParameterList();
  const column = columnOf(resource, field);
  const list = selectList(resource, 'l', '', lookup.fields && new Set([resource.key, ...lookup.fields]));
  const restriction = lookup.restricted ? workspaceCondition(resource, 'l', params) : null;
  const page = connectionPage(registry, relation, connection, params, `l.${columnOf(resource, relation.localField)}`);
  const pageRead = travelsAsJson(registry, relation) ? 'json' : 'rows';
  const json = pageRead === 'json' ? jsonPage(registry, relation, page) : null;
  const lateral = json ? `(SELECT ${json.sql} AS "${PAGE_COLUMN}")` : `(${page.text})`;
  const text =
    `SELECT l.${column} AS "${PARENT_COLUMN}", ${list.sql}, x.* FROM ${resource.table} l LEFT JOIN LATERAL ${lateral} x ON true ` +
    `WHERE l.${column} = ANY($1)${restriction ? ` AND ${restriction}` : ''}`;
  const columns = [PARENT_COLUMN, ...list.names];
  return {
    text,
    columns,
    timestamps: list.timestamps,
    parameters: params.sources,
    embeds: [],
    pageRead,
    pageFrom: columns.length,
    page: { ...page, text: '', parameters: [], ...(json ? { fromText: json.fromText } : {}) },
  };
}

/** What a relation's statement reads: which filter conditions, embedded one-relations and fields. */
export interface RelationQueryOptions extends Embedding {
  /** Conditions of the field's `filter` argument (a whole list's), as a connection takes them. */
  filter?: readonly FilterTerm[];
  /** The target's fields to read (its key is always read); all of them when omitted. */
  fields?: readonly string[];
  /** Only rows of the workspaces a restricted token may read. */
  restricted?: boolean;
}

/** The rows of a relation for many parents at once, in its order: one `= ANY($1)` scan. */
export function buildRelationQuery(registry: ResourceRegistry, relation: RelationDefinition, options: RelationQueryOptions = {}): GeneratedQuery {
  const params = new ParameterList();
  const base = relationBase(registry, relation, params, options, options.fields, options.restricted ?? false);
  const { target, conditions } = base;
  for (const [field, operator] of options.filter ?? []) conditions.push(filterCondition(target, field, operator, params));
  const order = (relation.orderBy ?? []).map((term) => `t.${columnOf(target, term.field)} ${sqlDirection(term.direction)}`);
  const orderClause = order.length > 0 ? ` ORDER BY ${order.join(', ')}` : '';
  const where = [`t.${base.foreign} = ANY($1)`, ...conditions].join(' AND ');
  const text = `SELECT t.${base.foreign} AS "${PARENT_COLUMN}", ${base.selected.join(', ')} FROM ${base.from} WHERE ${where}${orderClause}`;
  return { text, columns: base.columns, timestamps: base.timestamps, parameters: params.sources, embeds: base.embeds };
}
