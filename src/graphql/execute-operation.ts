import type { ExecutionResult } from 'graphql';
import type { Database } from '../db/database.ts';
import type { ResourceRegistry } from '../db/resource-registry.ts';
import { ApiError, toApiError } from '../errors.ts';
import { Loaders, type LoaderOptions, type Row } from '../loaders/loaders.ts';
import type { CompiledOperation, OperationName, OperationResults } from './operations.ts';
import type { GraphQLContext } from './schema.ts';

/** What running a fixed operation in-process needs. */
export interface OperationRuntime {
  db: Database;
  registry: ResourceRegistry;
}

/**
 * Rows the caller has already read, by resource name (a key's workspace, read with the key): the
 * operation's lookups of them are answered without a statement.
 */
export type KnownRows = Readonly<Record<string, Row | undefined>>;

/**
 * The context of one request to the internal GraphQL endpoint: fresh loaders on the pool (each
 * batch takes a connection of its own, so that a large query's levels do not hold one), restricted
 * to the workspaces of the request's token.
 */
export function requestContext(runtime: OperationRuntime, options: LoaderOptions = {}): GraphQLContext {
  return { loaders: new Loaders(runtime.registry, runtime.db, options) };
}

/**
 * Runs a pre-compiled operation in-process: one pooled connection for all its statements, fresh
 * per-request loaders primed with the known rows. The first error becomes a client-safe error
 * from the catalogue (unknown ones are masked as internal_error).
 */
export async function executeOperation<Name extends OperationName>(
  runtime: OperationRuntime,
  operation: CompiledOperation<Name>,
  variables: Record<string, unknown>,
  known: KnownRows = {},
): Promise<OperationResults[Name]> {
  const result: ExecutionResult = await runtime.db.withConnection((connection) => {
    const loaders = new Loaders(runtime.registry, connection);
    for (const [resource, row] of Object.entries(known)) if (row) loaders.prime(resource, row);
    return operation.execute(variables, { loaders });
  });
  if (result.errors && result.errors.length > 0) {
    const first = result.errors[0]!;
    throw toApiError(first.originalError ?? first);
  }
  if (!result.data) throw new ApiError('internal_error');
  return result.data as OperationResults[Name];
}
