import { columnOf, type RelationDefinition, type ResourceDefinition, type ResourceRegistry } from './resource-registry.ts';
import { PARENT_COLUMN, ParameterList, orderExpression, relationBase, selectList, sqlDirection, workspaceCondition, type GeneratedQuery } from './sql-parts.ts';

/**
 * The statements the loaders run, generated from the resource registry: lookups, relations (here),
 * connection pages and counts (connection-sql.ts); the pieces they share are in sql-parts.ts.
 */
export { buildConnectionQuery, buildCountQuery, connectionOrder, type ConnectionOrderTerm, type ConnectionQueryOptions, type FilterTerm } from './connection-sql.ts';
export {
  COUNT_COLUMN,
  PARENT_COLUMN,
  embeddable,
  joinedResource,
  orderColumn,
  type EmbeddedRelation,
  type GeneratedQuery,
  type JoinedResource,
  type ParameterSource,
} from './sql-parts.ts';

/**
 * `SELECT … FROM table WHERE field = ANY($1)`: rows of one resource by any of its fields. For a
 * token restricted to some workspaces, only rows of those workspaces.
 */
export function buildLookup(resource: ResourceDefinition, field: string, options: { restricted?: boolean } = {}): GeneratedQuery {
  const params = new ParameterList();
  const column = columnOf(resource, field);
  const list = selectList(resource, 't');
  const restriction = options.restricted ? workspaceCondition(resource, 't', params) : null;
  return {
    text: `SELECT t.${column} AS "${PARENT_COLUMN}", ${list.sql} FROM ${resource.table} t WHERE t.${column} = ANY($1)${restriction ? ` AND ${restriction}` : ''}`,
    columns: [PARENT_COLUMN, ...list.names],
    timestamps: list.timestamps,
    parameters: params.sources,
    embeds: [],
  };
}

/**
 * The rows of a relation for many parents at once. Without a limit it is one `= ANY($1)` scan;
 * with a per-parent limit each parent key drives a LATERAL index scan that stops at the limit.
 */
export interface RelationQueryOptions {
  /** The relation's GraphQL arguments the field is given (others are not part of the statement). */
  arguments?: readonly string[];
  /** One-relations of the target to read in the same statement (see `embeddable`). */
  embedded?: readonly string[];
  /** The target's fields to read (its key is always read); all of them when omitted. */
  fields?: readonly string[];
  /** Only rows of the workspaces a restricted token may read. */
  restricted?: boolean;
}

export function buildRelationQuery(registry: ResourceRegistry, relation: RelationDefinition, options: RelationQueryOptions = {}): GeneratedQuery {
  const params = new ParameterList();
  const base = relationBase(registry, relation, params, options.embedded ?? [], options.fields, options.restricted ?? false);
  const { target, conditions } = base;
  const order = (relation.orderBy ?? []).map((term) => `${orderExpression(registry, target, term, params)} ${sqlDirection(term.direction)}`);
  const orderClause = order.length > 0 ? ` ORDER BY ${order.join(', ')}` : '';
  for (const name of options.arguments ?? []) {
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

