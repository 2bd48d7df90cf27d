import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import depthLimit from 'graphql-depth-limit';
import { GraphQLError, getNamedType, isLeafType, isListType, isNonNullType, type GraphQLFormattedError, type GraphQLOutputType, type GraphQLSchema, type ValidationRule } from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import type { ResourceRegistry } from '../db/resource-registry.ts';
import { connectionOrder } from '../db/sql-builder.ts';
import { isApiError, isDatabaseUnavailable } from '../errors.ts';
import { MAX_PAGE_SIZE, parseConnectionArguments } from '../loaders/connection-arguments.ts';
import { connectionList } from '../loaders/loaders.ts';
import { listIndexOf, type ListIndex } from './connections.ts';

/** Refuses queries nested deeper than `maxDepth` at validation, before anything runs. */
export function useDepthLimit(maxDepth: number): ValidationRule {
  return depthLimit(maxDepth) as ValidationRule;
}

function isList(type: GraphQLOutputType): boolean {
  return isListType(isNonNullType(type) ? type.ofType : type);
}

interface Problem {
  /** Where in the document. */
  at: number;
  error: GraphQLError;
}

const refusal = (message: string) => new GraphQLError(message, { extensions: { code: 'invalid_request', http: { status: 400 } } });

/**
 * Cost = fields fetched, where every list counts as the rows it can return times the cost of one
 * of them: a connection its page size (`first` or `last`, at most 100, 100 when neither is given),
 * a list with a per-parent limit that limit; a connection's `edges` are that page. A list without
 * a page size has no honest estimate and is refused (`unbounded`). Connection arguments are
 * checked here too, so that a bad `first` or cursor is refused before any statement.
 */
function listCostEstimator(index: ListIndex, registry: ResourceRegistry, problems: Problem[]): ComplexityEstimator {
  return ({ type, field, node, args, childComplexity }) => {
    const key = `${type.name}.${field.name}`;
    const perRow = Math.max(childComplexity, 1);
    const problem = (message: string) => problems.push({ at: node.loc?.start ?? 0, error: refusal(message) });
    const connection = index.connections.get(key);
    if (connection) {
      const parent = registry.get(connection.resource);
      const relation = registry.relation(parent, connection.relation);
      try {
        const parsed = parseConnectionArguments(connectionList(parent, connection.relation), registry.get(relation.resource), connectionOrder(registry, relation), args);
        return 1 + parsed.size * perRow;
      } catch (error) {
        problem(isApiError(error) ? error.message : 'The arguments of a connection are not valid.');
        return 1 + MAX_PAGE_SIZE * perRow;
      }
    }
    // Introspection's lists are as long as the schema is large, not the data: they count once.
    const introspection = type.name.startsWith('__');
    if (introspection || !isList(field.type) || isLeafType(getNamedType(field.type)) || index.connectionTypes.has(type.name)) return 1 + childComplexity;
    const limit = index.plainLists.get(key)?.limit;
    if (limit) {
      const requested = args[limit.argument];
      if (requested === undefined || requested === null) return 1 + limit.default * perRow;
      if (typeof requested !== 'number' || !Number.isInteger(requested) || requested < 1 || requested > limit.max) {
        problem(`Argument "${limit.argument}" must be an integer from 1 to ${limit.max}.`);
        return 1 + limit.max * perRow;
      }
      return 1 + requested * perRow;
    }
    const plain = index.plainLists.get(key);
    problem(`Field "${key}" returns every row at once, which this endpoint refuses` + (plain ? `: page through "${plain.connectionField}" with first/after instead.` : '.'));
    return 1 + childComplexity;
  };
}

export interface CostLimitOptions {
  registry: ResourceRegistry;
  maxCost: number;
}

/**
 * Refuses, before anything runs and with a clear GraphQL error: bad connection arguments, lists
 * without a page size, and queries whose estimated cost exceeds `maxCost`. Every list's estimate
 * is its real page size, so the limit bounds the rows a query can return.
 */
export function useCostLimit(schema: GraphQLSchema, options: CostLimitOptions): ApolloServerPlugin {
  const index = listIndexOf(schema);
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document }: GraphQLRequestContext<object>) {
          const problems: Problem[] = [];
          let cost: number;
          try {
            cost = getComplexity({
              schema,
              query: document!,
              operationName: request.operationName,
              variables: request.variables ?? {},
              estimators: [listCostEstimator(index, options.registry, problems)],
            });
          } catch (error) {
            // Variables or arguments that do not fit their types, found while estimating.
            if (error instanceof GraphQLError) throw refusal(error.message);
            throw error;
          }
          // The first problem in the document, not the first the estimate met (it meets inner fields first).
          const first = problems.sort((a, b) => a.at - b.at)[0];
          if (first) throw first.error;
          if (cost > options.maxCost) {
            throw refusal(`Query cost ${cost} exceeds the limit of ${options.maxCost}; select fewer fields or lower "first".`);
          }
        },
      };
    },
  };
}

const MASKED_MESSAGE = 'An unexpected error occurred.';

/**
 * Errors from the catalogue keep their code and safe message; GraphQL's own syntax and
 * validation errors pass; anything else is masked (no SQL, no stack).
 */
export function maskError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (isApiError(original)) {
    return { message: original.message, path: formatted.path, extensions: { code: original.code } };
  }
  if (isDatabaseUnavailable(original)) {
    return { message: 'The service is temporarily unavailable; retry later.', path: formatted.path, extensions: { code: 'service_unavailable' } };
  }
  const code = formatted.extensions?.code;
  if (original instanceof GraphQLError && !original.originalError) {
    return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: code ? { code } : {} };
  }
  if (typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR') {
    return { message: formatted.message, locations: formatted.locations, extensions: { code } };
  }
  return { message: MASKED_MESSAGE, path: formatted.path, extensions: { code: 'internal_error' } };
}
