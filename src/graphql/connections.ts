import type { GraphQLSchema } from 'graphql';
import { FILTER_OPERATORS, fieldDefinition, personalFields, type FieldDefinition, type FilterOperator, type ResourceDefinition, type ResourceRegistry } from '../model/resource-registry.ts';
import { connectionOrder, type ConnectionOrderTerm } from '../sql/sql-builder.ts';
import { MAX_PAGE_SIZE } from '../loaders/connection-arguments.ts';

/** A generated connection field: `Type.field` pages the rows of `resource.relation`. */
export interface ConnectionField {
  resource: string;
  relation: string;
}

/** A list field that returns every row of a `many` relation at once: the fixed operations' (never served on internal GraphQL). */
export interface PlainListField {
  resource: string;
  relation: string;
  /** The connection field that pages the same rows. */
  connectionField: string;
}

/** What the cost limit and the internal schema need to know of the schema's lists. */
export interface ListIndex {
  /** By `Type.field`. */
  connections: ReadonlyMap<string, ConnectionField>;
  /** Generated connection types: their `edges` hold at most one page. */
  connectionTypes: ReadonlySet<string>;
  /** By `Type.field`. */
  plainLists: ReadonlyMap<string, PlainListField>;
}

const indexes = new WeakMap<GraphQLSchema, ListIndex>();

/** The lists of a schema made by `createSchema`. */
export function listIndexOf(schema: GraphQLSchema): ListIndex {
  const index = indexes.get(schema);
  if (!index) throw new Error('The schema was not made by createSchema');
  return index;
}

export function rememberListIndex(schema: GraphQLSchema, index: ListIndex): void {
  indexes.set(schema, index);
}

/** The connection field of a `many` relation: `bookings` → `bookingsConnection`. */
export const connectionFieldName = (relation: string) => `${relation}Connection`;
export const connectionTypeName = (resource: string) => `${resource}Connection`;
export const edgeTypeName = (resource: string) => `${resource}Edge`;
export const filterTypeName = (resource: string) => `${resource}Filter`;

/** The GraphQL type a field is served as, without its non-null mark. */
export function leafTypeOf(field: FieldDefinition): string {
  switch (field.type) {
    case 'id':
      return 'ID';
    case 'int':
      return 'Int';
    case 'float':
      return 'Float';
    case 'boolean':
      return 'Boolean';
    case 'timestamp':
      return 'DateTime';
    case 'enum':
      return field.enumType!;
    default:
      return 'String';
  }
}

export const PAGE_INFO = /* GraphQL */ `
"Where a page lies in its list (Relay cursor connections)."
type PageInfo {
  "Another page follows this one. Exact when paging with first/after; false when paging with last/before."
  hasNextPage: Boolean!
  "Another page precedes this one. Exact when paging with last/before; false when paging with first/after."
  hasPreviousPage: Boolean!
  "The cursor of the first edge of the page; null when the page is empty."
  startCursor: String
  "The cursor of the last edge of the page; pass it as after to read the next page. Null when the page is empty."
  endCursor: String
}
`;

const PERSONAL_FILTER = 'Personal data: only tokens with the personal-data grant may filter on it.';

const OPERATOR_DESCRIPTIONS: Record<FilterOperator, string> = {
  eq: 'equal to',
  in: 'equal to one of',
  gt: 'greater than (later than)',
  gte: 'greater than or equal to (at or after)',
  lt: 'less than (before)',
  lte: 'less than or equal to (at or before)',
};

/**
 * The types every list of the registry is paged and filtered with, as PostGraphile and Hasura
 * generate them from their model: per resource a filter input whose operators follow each
 * field's type (`in` for enums and ids, ranges for timestamps and numbers), Relay's connection
 * and edge types, and per field type its filter input.
 */
export function listTypes(registry: ResourceRegistry, enumDescriptions: ReadonlySet<string>): string[] {
  const definitions: string[] = [PAGE_INFO];
  const leafFilters = new Map<string, readonly FilterOperator[]>();
  for (const resource of registry.all()) {
    const personal = personalFields(resource);
    const fields = Object.keys(resource.fields).map((name) => {
      const leaf = leafTypeOf(fieldDefinition(resource, name));
      leafFilters.set(leaf, FILTER_OPERATORS[fieldDefinition(resource, name).type]);
      return `${personal.has(name) ? `  ${JSON.stringify(PERSONAL_FILTER)}\n` : ''}  ${name}: ${leaf}Filter`;
    });
    definitions.push(`"Conditions on ${resource.name} rows; every condition given must hold."\ninput ${filterTypeName(resource.name)} {\n${fields.join('\n')}\n}`);
    const connection = connectionTypeName(resource.name);
    const edge = edgeTypeName(resource.name);
    definitions.push(
      `"One page of ${resource.name} rows."\ntype ${connection} {\n  edges: [${edge}!]!\n  "The nodes of edges, for when no cursor but the page's is needed."\n  nodes: [${resource.name}!]!\n  pageInfo: PageInfo!\n` +
        `  "Every row of the list that the filter lets through, on every page (read only when selected)."\n  totalCount: Int!\n}`,
      `"A ${resource.name} and its position in the list."\ntype ${edge} {\n  "Opaque; pass it as after or before to page from here."\n  cursor: String!\n  node: ${resource.name}!\n}`,
    );
  }
  for (const [leaf, operators] of [...leafFilters].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const fields = operators.map((operator) => `  "${OPERATOR_DESCRIPTIONS[operator]}"\n  ${operator}: ${operator === 'in' ? `[${leaf}!]` : leaf}`);
    definitions.push(`"Conditions on ${enumDescriptions.has(leaf) ? 'an enum' : 'a'} ${leaf} field; every condition given must hold."\ninput ${leaf}Filter {\n${fields.join('\n')}\n}`);
  }
  return definitions;
}

/** The connection field of one `many` relation, its description `lead` then how it pages. */
export function connectionField(registry: ResourceRegistry, owner: ResourceDefinition, relationName: string, lead: string): string {
  const relation = registry.relation(owner, relationName);
  const target = registry.get(relation.resource);
  const size = target.maxPage ?? MAX_PAGE_SIZE;
  const description = [
    lead,
    `In pages of at most ${size} (first/after forward, last/before backward; first: ${size} when neither is given), `,
    `ordered by ${orderText(connectionOrder(registry, relation))}.`,
  ].join('');
  return `  ${JSON.stringify(description)}\n  ${connectionFieldName(relationName)}(first: Int, after: String, last: Int, before: String, filter: ${filterTypeName(target.name)}): ${connectionTypeName(target.name)}!`;
}

export function orderText(order: readonly ConnectionOrderTerm[]): string {
  return order.map(({ term, direction }) => `${term.field} ${direction === 'desc' ? 'descending' : 'ascending'}`).join(', then ');
}
