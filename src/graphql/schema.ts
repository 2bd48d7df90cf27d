import { makeExecutableSchema } from '@graphql-tools/schema';
import { filterSchema, type IResolvers } from '@graphql-tools/utils';
import { GraphQLScalarType, Kind, type GraphQLSchema } from 'graphql';
import type { ResourceModel } from '../model/resource-model.ts';
import type { ResourceRegistry } from '../model/resource-registry.ts';
import { isCalendarDateTime } from '../sql/timestamps.ts';
import type { Loaders, Page, Row } from '../loaders/loaders.ts';
import { connectionTypeName, edgeTypeName, listIndexOf, rememberListIndex, type ListIndex } from './connections.ts';
import { generateSdl } from './sdl.ts';
import type { SelectionInfo, Selections } from './selection.ts';

/** What one request's resolvers share: its loaders and the selections of its fields. */
export interface GraphQLContext {
  loaders: Loaders;
  selections: Selections;
}

/** The one text form of an instant: what `Date.prototype.toISOString` writes. */
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const DateTime = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  description: 'An instant in UTC, ISO 8601 with milliseconds and Z.',
  serialize(value) {
    // Registry rows carry timestamps already in this form (see ResourceDefinition.timestamps).
    if (typeof value === 'string' && ISO_UTC_MS.test(value)) return value;
    const date = value instanceof Date ? value : new Date(String(value));
    if (Number.isNaN(date.getTime())) throw new TypeError('DateTime cannot represent an invalid date');
    return date.toISOString();
  },
  parseValue(value) {
    return parseDateTime(value);
  },
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new TypeError('DateTime must be a string');
    return parseDateTime(ast.value);
  },
});

/** An instant: a date and time with `Z` or an offset (a time without a zone would mean the server's zone). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The instant, if its date and time exist and it lies in the years 0001 to 9999 in UTC: the
 * database takes the ISO text of the instant, which has no other form for other years.
 */
function parseDateTime(value: unknown): Date {
  if (typeof value !== 'string') throw new TypeError('DateTime must be a string');
  const date = new Date(value);
  const year = date.getUTCFullYear();
  if (!ISO_INSTANT.test(value) || !isCalendarDateTime(value) || Number.isNaN(date.getTime()) || year < 1 || year > 9999) {
    throw new TypeError('DateTime must be an ISO 8601 instant with Z or an offset, of a real date in the years 0001 to 9999, e.g. 2026-03-01T00:00:00.000Z');
  }
  return date;
}

/**
 * The executable schema: SDL generated from the resource model (`generateSdl`), resolvers
 * generated from its registry. The fixed operations run on it; internal GraphQL serves
 * `internalSchema` of it. Enum values are written in GraphQL style (PUBLIC_PAGE) and stored as
 * the catalog's labels (public_page).
 */
export function createSchema(model: Pick<ResourceModel, 'registry' | 'enums'>): GraphQLSchema {
  const generated = generateSdl(model);
  const enums: IResolvers = {};
  for (const [name, enumeration] of model.enums) enums[name] = Object.fromEntries(enumeration.values);
  const schema = makeExecutableSchema<GraphQLContext>({
    typeDefs: generated.typeDefs,
    resolvers: [{ DateTime }, enums, registryResolvers(model.registry, generated.index), connectionResolvers(model.registry, generated.index)],
  });
  rememberListIndex(schema, generated.index);
  return schema;
}

const internals = new WeakMap<GraphQLSchema, GraphQLSchema>();

/**
 * What internal GraphQL serves of a schema made by `createSchema`: every list through its
 * connection, in bounded pages; the fields that return a whole list at once are the fixed
 * operations' alone.
 */
export function internalSchema(schema: GraphQLSchema): GraphQLSchema {
  let internal = internals.get(schema);
  if (!internal) {
    const index = listIndexOf(schema);
    internal = filterSchema({ schema, objectFieldFilter: (typeName, fieldName) => !index.plainLists.has(`${typeName}.${fieldName}`) });
    rememberListIndex(internal, index);
    internals.set(schema, internal);
  }
  return internal;
}

/** Resolvers of the registry's roots and relations: a `one` as its row, a `many` as every row (its connection is resolved apart). */
function registryResolvers(registry: ResourceRegistry, index: ListIndex): IResolvers<Row, GraphQLContext> {
  const resolvers: Record<string, Record<string, unknown>> = { Query: {} };
  for (const resource of registry.all()) {
    // A root's row is read with the page of the one connection selected under it, in one statement.
    const connections = new Map([...index.connections].filter(([, field]) => field.resource === resource.name).map(([key, field]) => [key.slice(resource.name.length + 1), field.relation]));
    const relationOf = (field: string) => connections.get(field);
    for (const [fieldName, root] of Object.entries(resource.roots ?? {})) {
      resolvers.Query![fieldName] = (_: unknown, args: Record<string, unknown>, context: GraphQLContext, info: SelectionInfo) =>
        context.loaders.lookup(resource.name, String(args[root.argument]), root.field, context.selections.fields(info), context.selections.pageUnder(info, relationOf));
    }
    const typeResolvers: Record<string, unknown> = {};
    for (const [relationName, relation] of Object.entries(resource.relations ?? {})) {
      typeResolvers[relationName] =
        relation.kind === 'one'
          ? (parent: Row, args: Record<string, unknown>, context: GraphQLContext, info: SelectionInfo) => {
              const rows = context.loaders.relation(resource, relationName, parent, args, context.selections.fields(info));
              return rows instanceof Promise ? rows.then((found) => found[0] ?? null) : (rows[0] ?? null);
            }
          : (parent: Row, args: Record<string, unknown>, context: GraphQLContext, info: SelectionInfo) =>
              context.loaders.relation(resource, relationName, parent, args, context.selections.fields(info));
    }
    if (Object.keys(typeResolvers).length > 0) resolvers[resource.name] = typeResolvers;
  }
  return resolvers as IResolvers<Row, GraphQLContext>;
}

/** A connection as its fields resolve it: the page, each edge's cursor computed only when selected. */
interface Edge {
  node: Row;
  page: Page;
}

function connectionResolvers(registry: ResourceRegistry, index: ListIndex): IResolvers<unknown, GraphQLContext> {
  const resolvers: Record<string, Record<string, unknown>> = {};
  for (const [key, { resource: resourceName, relation: relationName }] of index.connections) {
    const resource = registry.get(resourceName);
    const target = registry.relation(resource, relationName).resource;
    const fieldName = key.slice(resourceName.length + 1);
    (resolvers[resource.name] ??= {})[fieldName] = (parent: Row, args: Record<string, unknown>, context: GraphQLContext, info: SelectionInfo) =>
      context.loaders.connection(resource, relationName, parent, args, context.selections.nodeFields(info), context.selections.cursors(info));
    resolvers[connectionTypeName(target)] = {
      edges: (page: Page): Edge[] => page.rows.map((node) => ({ node, page })),
      nodes: (page: Page) => page.rows,
      // The cursors only when selected: a page read without a cursor selected has none to give.
      pageInfo: (page: Page) => ({
        hasNextPage: page.hasNextPage,
        hasPreviousPage: page.hasPreviousPage,
        get startCursor() {
          return page.rows.length > 0 ? page.cursor(page.rows[0]!) : null;
        },
        get endCursor() {
          return page.rows.length > 0 ? page.cursor(page.rows.at(-1)!) : null;
        },
      }),
      totalCount: (page: Page) => page.totalCount(),
    };
    resolvers[edgeTypeName(target)] = { cursor: (edge: Edge) => edge.page.cursor(edge.node) };
  }
  return resolvers as IResolvers<unknown, GraphQLContext>;
}
