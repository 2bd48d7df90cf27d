import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import depthLimit from 'graphql-depth-limit';
import { GraphQLError, getNamedType, isListType, isNonNullType, type GraphQLFormattedError, type GraphQLOutputType, type GraphQLSchema, type ValidationRule } from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import { isApiError, isDatabaseUnavailable } from '../errors.ts';

/** Refuses queries nested deeper than `maxDepth` at validation, before anything runs. */
export function useDepthLimit(maxDepth: number): ValidationRule {
  return depthLimit(maxDepth) as ValidationRule;
}

function isList(type: GraphQLOutputType): boolean {
  return isListType(isNonNullType(type) ? type.ofType : type);
}

/**
 * Cost = fields fetched, where a list counts as its `first` argument (or `assumedListSize` when
 * unbounded) times the cost of one element.
 */
function listCostEstimator(assumedListSize: number): ComplexityEstimator {
  return ({ field, args, childComplexity }) => {
    if (!isList(field.type)) return 1 + childComplexity;
    const first = typeof args.first === 'number' ? args.first : assumedListSize;
    const leaf = getNamedType(field.type) === field.type;
    return 1 + (leaf ? 0 : first * Math.max(childComplexity, 1));
  };
}

/** Refuses queries whose estimated cost exceeds `maxCost`, with a clear GraphQL error. */
export function useCostLimit(schema: GraphQLSchema, maxCost: number, assumedListSize = 20): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ request, document }: GraphQLRequestContext<object>) {
          const cost = getComplexity({
            schema,
            query: document!,
            operationName: request.operationName,
            variables: request.variables ?? {},
            estimators: [listCostEstimator(assumedListSize)],
          });
          if (cost > maxCost) {
            throw new GraphQLError(`Query cost ${cost} exceeds the limit of ${maxCost}; select fewer fields or lower "first".`, {
              extensions: { code: 'invalid_request', http: { status: 400 } },
            });
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
