import type { ExecutionResult } from 'graphql';
import type { Database } from '../src/db/database.ts';
import type { ResourceRegistry } from '../src/db/resource.ts';
import { ApiError, toApiError } from '../src/errors.ts';
import type { CompiledOperation } from '../src/graphql/operations.ts';
import { Loaders, type Row } from '../src/loaders/loaders.ts';

/** Rows the request has already read (a key's workspace), by resource name. */
export type KnownRows = ReadonlyArray<readonly [resource: string, row: Row | undefined]>;

export interface OperationRunner {
  db: Database;
  registry: ResourceRegistry;
}

/** Executes a pre-compiled operation in-process with fresh per-request loaders. */
export async function runOperation(
  runner: OperationRunner,
  operation: CompiledOperation,
  variables: Record<string, unknown>,
  known: KnownRows = [],
): Promise<unknown> {
  const result: ExecutionResult = await runner.db.withConnection((connection) => {
    const loaders = new Loaders(runner.registry, connection);
    for (const [resource, row] of known) if (row) loaders.prime(resource, row);
    return operation.execute(variables, { loaders });
  });
  if (result.errors && result.errors.length > 0) {
    const first = result.errors[0]!;
    throw toApiError(first.originalError ?? first);
  }
  if (!result.data) throw new ApiError('internal_error');
  return result.data;
}
