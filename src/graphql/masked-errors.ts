import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { isApiError, isDatabaseUnavailable } from '../errors.ts';

const MASKED_MESSAGE = 'An unexpected error occurred.';

/**
 * Errors from the catalogue keep their code and safe message; GraphQL's own syntax and
 * validation errors pass; anything else is masked (no SQL, no stack).
 */
export function maskError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (isApiError(original)) {
    return { message: original.message, path: formatted.path, extensions: original.field === undefined ? { code: original.code } : { code: original.code, field: original.field } };
  }
  if (isDatabaseUnavailable(original)) {
    return { message: 'The service is temporarily unavailable; retry later.', path: formatted.path, extensions: { code: 'service_unavailable' } };
  }
  const code = formatted.extensions?.code;
  // Apollo Server gives INTERNAL_SERVER_ERROR to a GraphQLError thrown without a code, as a failing plugin throws it.
  if (code === 'INTERNAL_SERVER_ERROR') return { message: MASKED_MESSAGE, path: formatted.path, extensions: { code: 'internal_error' } };
  if (original instanceof GraphQLError && !original.originalError) {
    return { message: formatted.message, locations: formatted.locations, path: formatted.path, extensions: code ? { code } : {} };
  }
  if (typeof code === 'string') {
    return { message: formatted.message, locations: formatted.locations, extensions: { code } };
  }
  return { message: MASKED_MESSAGE, path: formatted.path, extensions: { code: 'internal_error' } };
}
