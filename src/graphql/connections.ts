import {
  buildASTSchema,
  concatAST,
  getNamedType,
  isEnumType,
  isLeafType,
  isObjectType,
  type DocumentNode,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { FILTER_OPERATORS, fieldDefinition, type FieldType, type FilterOperator, type RelationLimit, type ResourceRegistry } from '../db/resource-registry.ts';
import { connectionOrder, type ConnectionOrderTerm } from '../db/sql-builder.ts';
import { MAX_PAGE_SIZE } from '../loaders/connection-arguments.ts';

/** A generated connection field: `Type.field` pages the rows of `resource.relation`. */
export interface ConnectionField {
  resource: string;
  relation: string;
}

/** A list field written in the SDL for a `many` relation (the fixed operations use them). */
export interface PlainListField {
  resource: string;
  relation: string;
  /** The connection field that pages the same rows. */
  connectionField: string;
  /** The per-parent limit that bounds it, if any. */
  limit?: RelationLimit;
}

/** What the cost limit needs to know of the schema's lists. */
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

/** The types the SDL alone defines, for what is generated from the registry to build on. */
export function sdlSchema(documents: readonly DocumentNode[]): GraphQLSchema {
  return buildASTSchema(concatAST(documents), { assumeValidSDL: true });
}

/** The connection field of a `many` relation: `bookings` → `bookingsConnection`. */
export const connectionFieldName = (relation: string) => `${relation}Connection`;
export const connectionTypeName = (resource: string) => `${resource}Connection`;
export const edgeTypeName = (resource: string) => `${resource}Edge`;
export const filterTypeName = (resource: string) => `${resource}Filter`;

const PAGE_INFO = /* GraphQL */ `
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

const OPERATOR_DESCRIPTIONS: Record<FilterOperator, string> = {
  eq: 'equal to',
  in: 'equal to one of',
  gt: 'greater than (later than)',
  gte: 'greater than or equal to (at or after)',
  lt: 'less than (before)',
  lte: 'less than or equal to (at or before)',
};

export interface GeneratedConnections {
  /** The SDL to add: PageInfo, filter inputs, connection and edge types, connection fields. */
  typeDefs: string;
  index: ListIndex;
}

/**
 * Connections generated from the registry for every `many` relation of every resource whose type
 * the SDL defines, as PostGraphile and Hasura generate them from their model: a
 * `<relation>Connection(first, after, last, before, filter)` field, Relay's edges and page info,
 * `totalCount`, and a filter input whose operators follow each column's registry type (`in` for
 * enums and ids, ranges for timestamps and numbers). A resource added through the registry gets
 * them with no code of its own.
 */
export function generateConnections(registry: ResourceRegistry, base: GraphQLSchema): GeneratedConnections {
  const definitions: string[] = [PAGE_INFO];
  const filterInputs = new Map<string, { leaf: string; operators: readonly FilterOperator[] }>();
  const generatedTypes = new Set<string>();
  const connections = new Map<string, ConnectionField>();
  const connectionTypes = new Set<string>();
  const plainLists = new Map<string, PlainListField>();

  const assertFree = (name: string) => {
    if (base.getType(name)) throw new Error(`The type ${name} is generated from the registry; remove it from the SDL`);
  };
  assertFree('PageInfo');

  /** The filter input of a resource, or null when none of its fields can be filtered. */
  const filterOf = (resourceName: string, type: GraphQLObjectType): string | null => {
    const resource = registry.get(resourceName);
    const inputName = filterTypeName(resourceName);
    if (generatedTypes.has(inputName)) return inputName;
    const fields: string[] = [];
    for (const field of Object.keys(resource.fields)) {
      const graphqlField = type.getFields()[field];
      if (!graphqlField || graphqlField.args.length > 0) continue;
      const leaf = getNamedType(graphqlField.type);
      const fieldType = fieldDefinition(resource, field).type;
      if (!isLeafType(leaf) || !fits(fieldType, leaf)) continue;
      const operators = FILTER_OPERATORS[fieldType];
      const leafFilter = `${leaf.name}Filter`;
      const known = filterInputs.get(leafFilter);
      if (known && known.operators.join() !== operators.join()) {
        throw new Error(`${resourceName}.${field}: ${leaf.name} fields are filtered with ${known.operators.join(', ')} elsewhere`);
      }
      if (!known) {
        assertFree(leafFilter);
        filterInputs.set(leafFilter, { leaf: leaf.name, operators });
      }
      fields.push(`  ${field}: ${leafFilter}`);
    }
    if (fields.length === 0) return null;
    assertFree(inputName);
    generatedTypes.add(inputName);
    definitions.push(`"Conditions on ${resourceName} rows; every condition given must hold."\ninput ${inputName} {\n${fields.join('\n')}\n}`);
    return inputName;
  };

  const connectionOf = (resourceName: string) => {
    const connection = connectionTypeName(resourceName);
    const edge = edgeTypeName(resourceName);
    if (generatedTypes.has(connection)) return connection;
    assertFree(connection);
    assertFree(edge);
    generatedTypes.add(connection);
    connectionTypes.add(connection);
    definitions.push(
      `"One page of ${resourceName} rows."\ntype ${connection} {\n  edges: [${edge}!]!\n  "The nodes of edges, for when no cursor but the page's is needed."\n  nodes: [${resourceName}!]!\n  pageInfo: PageInfo!\n` +
        `  "Every row of the list that the filter lets through, on every page (read only when selected)."\n  totalCount: Int!\n}`,
      `"A ${resourceName} and its position in the list."\ntype ${edge} {\n  "Opaque; pass it as after or before to page from here."\n  cursor: String!\n  node: ${resourceName}!\n}`,
    );
    return connection;
  };

  for (const resource of registry.all()) {
    const type = base.getType(resource.name);
    if (!isObjectType(type)) continue;
    const fields: string[] = [];
    for (const [relationName, relation] of Object.entries(resource.relations ?? {})) {
      if (relation.kind !== 'many') continue;
      const target = base.getType(relation.resource);
      if (!isObjectType(target)) throw new Error(`${resource.name}.${relationName}: the SDL has no type ${relation.resource}`);
      const fieldName = connectionFieldName(relationName);
      if (type.getFields()[fieldName]) throw new Error(`${resource.name}.${fieldName} is generated from the registry; remove it from the SDL`);
      const filter = filterOf(relation.resource, target);
      const connection = connectionOf(relation.resource);
      const plain = type.getFields()[relationName];
      if (plain) {
        plainLists.set(`${resource.name}.${relationName}`, {
          resource: resource.name,
          relation: relationName,
          connectionField: fieldName,
          ...(relation.limit ? { limit: relation.limit } : {}),
        });
      }
      connections.set(`${resource.name}.${fieldName}`, { resource: resource.name, relation: relationName });
      const description = [
        plain?.description ? `${plain.description.trim()}\n` : '',
        `In pages of at most ${MAX_PAGE_SIZE} (first/after forward, last/before backward; first: ${MAX_PAGE_SIZE} when neither is given), `,
        `ordered by ${orderText(connectionOrder(registry, relation))}.`,
      ].join('');
      fields.push(
        `  ${JSON.stringify(description)}\n  ${fieldName}(first: Int, after: String, last: Int, before: String${filter ? `, filter: ${filter}` : ''}): ${connection}!`,
      );
    }
    if (fields.length > 0) definitions.push(`extend type ${resource.name} {\n${fields.join('\n')}\n}`);
  }

  for (const [name, { leaf, operators }] of filterInputs) {
    const fields = operators.map((operator) => `  "${OPERATOR_DESCRIPTIONS[operator]}"\n  ${operator}: ${operator === 'in' ? `[${leaf}!]` : leaf}`);
    const kind = isEnumType(base.getType(leaf)) ? 'an enum' : 'a';
    definitions.push(`"Conditions on ${kind} ${leaf} field; every condition given must hold."\ninput ${name} {\n${fields.join('\n')}\n}`);
  }
  return { typeDefs: definitions.join('\n\n'), index: { connections, connectionTypes, plainLists } };
}

/**
 * Whether a column's registry type agrees with its field's GraphQL type. A field whose column is
 * not typed to match (a bare column name is a `string`) gets no filter rather than a wrong one.
 */
function fits(type: FieldType, leaf: GraphQLLeafType): boolean {
  switch (type) {
    case 'timestamp':
      return leaf.name === 'DateTime';
    case 'int':
      return leaf.name === 'Int';
    case 'float':
      return leaf.name === 'Float';
    case 'boolean':
      return leaf.name === 'Boolean';
    case 'enum':
      return isEnumType(leaf);
    default:
      return leaf.name === 'ID' || leaf.name === 'String';
  }
}

function orderText(order: readonly ConnectionOrderTerm[]): string {
  return order
    .map(({ term, direction }) => {
      const where = 'aggregate' in term && term.where ? ` where ${Object.entries(term.where).map(([field, value]) => `${field} = ${String(value)}`).join(' and ')}` : '';
      const what = 'aggregate' in term ? `${term.aggregate}(${term.relation}.${term.field}${where})` : term.field;
      return `${what} ${direction === 'desc' ? 'descending' : 'ascending'}`;
    })
    .join(', then ');
}
