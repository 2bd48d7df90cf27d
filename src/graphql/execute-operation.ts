import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { ExecutionResult } from 'graphql';
import type { Database, Queryable } from '../db/database.ts';
import type { ResourceRegistry } from '../model/resource-registry.ts';
import { ApiError, toApiError } from '../errors.ts';
import { Loaders, type LoaderOptions, type Row } from '../loaders/loaders.ts';
import type { CompiledOperation, OperationName, OperationResults } from './operations.ts';
import type { GraphQLContext } from './schema.ts';
import { Selections } from './selection.ts';

/** What running a fixed operation in-process needs. */
export interface OperationRuntime {
  /** The primary's pool, or one held connection (a replica's, in a snapshot). */
  db: Pick<Database, 'withConnection'>;
  registry: ResourceRegistry;
}

/**
 * Rows the caller has already read, by resource name (a key's workspace, read with the key): the
 * operation's lookups of them are answered without a statement.
 */
export type KnownRows = Readonly<Record<string, Row | undefined>>;

/**
 * The context of one request, the only place its state lives: fresh loaders (and their plans,
 * which hold the request's bound values) and the selections of its fields. The internal GraphQL
 * endpoint's loaders run on the pool (each batch takes a connection of its own, so that a large
 * query's levels do not hold one), restricted to the workspaces of the request's token; a fixed
 * operation's run on its one connection.
 */
export function requestContext(runtime: { registry: ResourceRegistry; db: Queryable }, options: LoaderOptions = {}): GraphQLContext {
  return { loaders: new Loaders(runtime.registry, runtime.db, options), selections: new Selections() };
}

/**
 * Compiled operations run outside graphql-js's `execute`, where the GraphQL instrumentation would
 * see them: their span is opened here. Without a tracing SDK these are the API's no-op spans.
 */
const tracer = trace.getTracer('course-booking-public-api/graphql');

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
  // Its attributes name the operation; its variables (a workspace id, a booking id) are never recorded.
  const result: ExecutionResult = await tracer.startActiveSpan(operation.title, { attributes: operation.traceAttributes }, async (span) => {
    try {
      const executed = await runtime.db.withConnection((connection) => {
        const context = requestContext({ registry: runtime.registry, db: connection });
        for (const [resource, row] of Object.entries(known)) if (row) context.loaders.prime(resource, row);
        return operation.execute(variables, context);
      });
      if (executed.errors?.length) span.setStatus({ code: SpanStatusCode.ERROR });
      return executed;
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
  if (result.errors && result.errors.length > 0) {
    const first = result.errors[0]!;
    throw toApiError(first.originalError ?? first);
  }
  if (!result.data) throw new ApiError('internal_error');
  return result.data as OperationResults[Name];
}

/**
 * Runs one fixed operation once for each set of variables, on one connection and one set of
 * loaders, so that their lookups go together (one statement for all the bookings, say). The sets
 * must differ only in ids: the fields selected (the directives' values) are worked out once, from
 * the first. Each result is its data, or the client-safe error of its first error.
 */
export async function executeOperationEach<Name extends OperationName>(
  runtime: OperationRuntime,
  operation: CompiledOperation<Name>,
  variables: ReadonlyArray<Record<string, unknown>>,
): Promise<Array<OperationResults[Name] | ApiError>> {
  return tracer.startActiveSpan(operation.title, { attributes: { ...operation.traceAttributes, 'graphql.operation.count': variables.length } }, async (span) => {
    try {
      const results = await runtime.db.withConnection((connection) => {
        const context = requestContext({ registry: runtime.registry, db: connection });
        return Promise.all(variables.map(async (each) => operation.execute(each, context)));
      });
      return results.map((result: ExecutionResult) => {
        if (result.errors?.length) {
          span.setStatus({ code: SpanStatusCode.ERROR });
          const first = result.errors[0]!;
          return toApiError(first.originalError ?? first);
        }
        return result.data ? (result.data as OperationResults[Name]) : new ApiError('internal_error');
      });
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
