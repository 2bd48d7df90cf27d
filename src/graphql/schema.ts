import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { IResolvers } from '@graphql-tools/utils';
import { GraphQLScalarType, Kind, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { ResourceRegistry } from '../db/resource.ts';
import type { Loaders, Row } from '../loaders/loaders.ts';
import type { SelectionInfo } from './selection.ts';

export const SCHEMA_DIR = fileURLToPath(new URL('../../schema', import.meta.url));

export interface GraphQLContext {
  loaders: Loaders;
}

/** The SDL files of `schema/`, in name order. */
export function loadTypeDefs(dir: string = SCHEMA_DIR): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.graphql'))
    .sort()
    .map((file) => readFileSync(`${dir}/${file}`, 'utf8'));
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

function parseDateTime(value: unknown): Date {
  if (typeof value !== 'string') throw new TypeError('DateTime must be a string');
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw new TypeError('DateTime must be an ISO 8601 instant');
  return date;
}

export interface SchemaOptions {
  registry: ResourceRegistry;
  /** SDL sources; those of `schema/` by default. */
  typeDefs?: string[];
}

/**
 * The executable schema: SDL from `schema/`, resolvers generated from the resource registry.
 * Enum values are written in GraphQL style (PUBLIC_PAGE) and stored as lowercase labels.
 */
export function createSchema(options: SchemaOptions): GraphQLSchema {
  const typeDefs = options.typeDefs ?? loadTypeDefs();
  const documents = typeDefs.map((source) => parse(source));
  return makeExecutableSchema<GraphQLContext>({
    typeDefs: documents,
    resolvers: [{ DateTime }, enumResolvers(documents), registryResolvers(options.registry)],
  });
}

function enumResolvers(documents: DocumentNode[]): IResolvers {
  const resolvers: IResolvers = {};
  for (const document of documents) {
    for (const definition of document.definitions) {
      if (definition.kind !== Kind.ENUM_TYPE_DEFINITION && definition.kind !== Kind.ENUM_TYPE_EXTENSION) continue;
      const values: Record<string, string> = {};
      for (const value of definition.values ?? []) values[value.name.value] = value.name.value.toLowerCase();
      resolvers[definition.name.value] = { ...(resolvers[definition.name.value] as object), ...values };
    }
  }
  return resolvers;
}

function registryResolvers(registry: ResourceRegistry): IResolvers<Row, GraphQLContext> {
  const resolvers: Record<string, Record<string, unknown>> = { Query: {} };
  for (const resource of registry.all()) {
    for (const [fieldName, root] of Object.entries(resource.roots ?? {})) {
      resolvers.Query![fieldName] = (_: unknown, args: Record<string, unknown>, context: GraphQLContext) =>
        context.loaders.lookup(resource.name, String(args[root.argument]), root.field);
    }
    const typeResolvers: Record<string, unknown> = {};
    for (const [relationName, relation] of Object.entries(resource.relations ?? {})) {
      typeResolvers[relationName] =
        relation.kind === 'one'
          ? (parent: Row, args: Record<string, unknown>, context: GraphQLContext, info: SelectionInfo) => {
              const rows = context.loaders.relation(resource, relationName, parent, args, info);
              return rows instanceof Promise ? rows.then((found) => found[0] ?? null) : (rows[0] ?? null);
            }
          : (parent: Row, args: Record<string, unknown>, context: GraphQLContext, info: SelectionInfo) =>
              context.loaders.relation(resource, relationName, parent, args, info);
    }
    if (Object.keys(typeResolvers).length > 0) resolvers[resource.name] = typeResolvers;
  }
  return resolvers as IResolvers<Row, GraphQLContext>;
}
