import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, getNamedType, getVariableValues, isLeafType, isListType, isNonNullType, type DocumentNode, type GraphQLFormattedError, type GraphQLOutputType, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import type { ResourceRegistry } from '../model/resource-registry.ts';
import { connectionOrder } from '../sql/sql-builder.ts';
import type { TableSizes } from './table-statistics-store.ts';
import { isApiError, isDatabaseUnavailable } from '../errors.ts';
import { MAX_PAGE_SIZE, parseConnectionArguments } from '../loaders/connection-arguments.ts';
import { connectionList } from '../loaders/loaders.ts';
import { listIndexOf, type ListIndex } from './connections.ts';
import { introspectionListLengths } from './introspection-size.ts';
import { eachSelectedField } from './selection.ts';
import { POINT_MS, estimateWork, type WorkEstimate } from './work-estimate.ts';

function isList(type: GraphQLOutputType): boolean {
  return isListType(isNonNullType(type) ? type.ofType : type);
}

interface Problem {
  /** Where in the document. */
  at: number;
  error: GraphQLError;
}

const refusal = (message: string) => new GraphQLError(message, { extensions: { code: 'invalid_request', http: { status: 400 } } });

/** Whether an argument's value holds U+0000 anywhere, which no text the database stores can. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(holdsNul);
  return value !== null && typeof value === 'object' && !(value instanceof Date) && Object.values(value).some(holdsNul);
}

/**
 * Size = fields fetched, where every list counts as the rows it can return times the cost of one
 * of them: a connection its page size (`first` or `last`, at most 100, 100 when neither is given),
 * a connection's `edges` are that page; an introspection list its average length in the served
 * schema (`introspectionListLengths`). A list without a page size (a whole list, which only the
 * fixed operations' schema has) has no honest estimate and is refused. Connection arguments are
 * checked here too, so that a bad `first` or cursor is refused before any statement, and so are
 * arguments holding U+0000, which the database would refuse with an error.
 */
function listCostEstimator(index: ListIndex, introspection: ReadonlyMap<string, number>, registry: ResourceRegistry, problems: Problem[]): ComplexityEstimator {
  return ({ type, field, node, args, childComplexity }) => {
    const key = `${type.name}.${field.name}`;
    const perRow = Math.max(childComplexity, 1);
    const problem = (message: string) => problems.push({ at: node.loc?.start ?? 0, error: refusal(message) });
    const withNul = Object.keys(args).find((name) => holdsNul(args[name]));
    if (withNul) problem(`Argument "${withNul}" holds the character U+0000, which no stored value holds.`);
    const introspected = introspection.get(key);
    if (introspected !== undefined) return 1 + introspected * perRow;
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
    if (!isList(field.type) || isLeafType(getNamedType(field.type)) || index.connectionTypes.has(type.name)) return 1 + childComplexity;
    const plain = index.plainLists.get(key);
    problem(`Field "${key}" returns every row at once, which this endpoint refuses` + (plain ? `: page through "${plain.connectionField}" with first/after instead.` : '.'));
    return 1 + childComplexity;
  };
}

export interface CostLimitOptions {
  registry: ResourceRegistry;
  /** The largest size: fields times the rows of the lists that hold them (`listCostEstimator`). */
  maxSize: number;
  /** The largest work estimate, in points (`estimateWork`). */
  maxCost: number;
  /** The table sizes the work estimate reads. */
  sizes: TableSizes;
  /** Lists that are no connection but have a known bound (`Type.field` → the rows counted for them). */
  boundedLists?: ReadonlyMap<string, number> | undefined;
  /** Fields that read no resource of the registry and have a price of their own (`Type.field` → points), added to the work each time they are selected. */
  fieldPoints?: ReadonlyMap<string, number> | undefined;
  /**
   * Called with the work estimate of every request within the limits, before anything runs; what
   * it throws is the request's answer (a budget that does not cover the estimate).
   */
  spend?: (estimate: WorkEstimate, request: GraphQLRequestContext<object>) => Promise<void>;
}

/** How many estimates of one document are kept: one per set of variables it was sent with. */
const ESTIMATES_PER_DOCUMENT = 64;

/**
 * The work estimates of requests that passed every limit, by their document (kept as long as
 * Apollo Server keeps the parsed document), operation, coerced variables and the table sizes'
 * generation: both the size and the work follow from those alone, so a trusted document sent again
 * with the same variables is not walked twice. A request that was refused is always estimated
 * again, and so meets the same refusal.
 */
class PassedEstimates {
  readonly #byDocument = new WeakMap<DocumentNode, Map<string, WorkEstimate>>();

  key(operation: OperationDefinitionNode, variables: Record<string, unknown>, sizes: TableSizes): string {
    return `${operation.name?.value ?? ''}\u0000${sizes.generation ?? 0}\u0000${JSON.stringify(variables)}`;
  }

  get(document: DocumentNode, key: string): WorkEstimate | undefined {
    return this.#byDocument.get(document)?.get(key);
  }

  set(document: DocumentNode, key: string, work: WorkEstimate): void {
    let estimates = this.#byDocument.get(document);
    if (!estimates) {
      estimates = new Map();
      this.#byDocument.set(document, estimates);
    }
    if (estimates.size >= ESTIMATES_PER_DOCUMENT) estimates.clear();
    estimates.set(key, work);
  }
}

/**
 * Refuses, before anything runs and with a clear GraphQL error: bad connection arguments, lists
 * without a page size, queries whose size (fields times page sizes: what a response can hold)
 * exceeds `maxSize`, and queries whose work estimate (`estimateWork`: what their statements can
 * read) exceeds `maxCost`, naming the reads that make it. A request whose operation Apollo Server
 * did not resolve (an unknown operation name, several anonymous operations) is left to its refusal:
 * nothing is estimated, nothing spent.
 */
export function useCostLimit(schema: GraphQLSchema, options: CostLimitOptions): ApolloServerPlugin {
  const index = listIndexOf(schema);
  const introspection = new Map([...introspectionListLengths(schema), ...(options.boundedLists ?? [])]);
  const passed = new PassedEstimates();
  return {
    async requestDidStart() {
      return {
        async didResolveOperation(requestContext: GraphQLRequestContext<object>) {
          const { request, document, operation } = requestContext;
          if (!operation || !document) return;
          // Variables that do not fit their types are refused here, before anything is spent.
          const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
          if (coerced.errors) throw refusal(coerced.errors[0]!.message);
          const key = passed.key(operation, coerced.coerced, options.sizes);
          const known = passed.get(document, key);
          if (known) return options.spend?.(known, requestContext);
          const problems: Problem[] = [];
          let size: number;
          try {
            // Whole points: an introspection type's `ofType` counts a share of one.
            size = Math.ceil(getComplexity({
              schema,
              query: document,
              // The operation Apollo Server resolved: the request's name may be empty or name none
              // (an anonymous operation sent with a name), which the estimator cannot look up.
              operationName: operation.name?.value,
              // As sent: the estimator coerces them itself.
              variables: request.variables ?? {},
              estimators: [listCostEstimator(index, introspection, options.registry, problems)],
            }));
          } catch (error) {
            // Arguments that do not fit their types, found while estimating.
            if (error instanceof GraphQLError) throw refusal(error.message);
            throw error;
          }
          // The first problem in the document, not the first the estimate met (it meets inner fields first).
          const first = problems.sort((a, b) => a.at - b.at)[0];
          if (first) throw first.error;
          if (size > options.maxSize) {
            throw refusal(`Query size ${size} exceeds the limit of ${options.maxSize}; select fewer fields or lower "first".`);
          }
          const work = withFieldPoints(schema, options.fieldPoints, document, operation, coerced.coerced, estimateWork({ schema, registry: options.registry, index, sizes: options.sizes }, document, operation, coerced.coerced));
          if (work.points > options.maxCost) {
            const named = work.reads.slice(0, 3).map((read) => `${read.what} (${read.points} points)`);
            throw refusal(
              `Query cost ${work.points} exceeds the limit of ${options.maxCost} points (${options.maxCost * POINT_MS} ms of database time)` +
                `${named.length > 0 ? `: ${named.join('; ')}` : ''}; read fewer rows, filter on indexed columns or leave out totalCount.`,
            );
          }
          passed.set(document, key, work);
          await options.spend?.(work, requestContext);
        },
      };
    },
  };
}

/** The work of an operation with the points of the priced fields it selects added, each named as a read. */
function withFieldPoints(
  schema: GraphQLSchema,
  prices: ReadonlyMap<string, number> | undefined,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  work: WorkEstimate,
): WorkEstimate {
  if (!prices || prices.size === 0) return work;
  const reads = [...work.reads];
  let points = work.points;
  eachSelectedField(schema, document, operation, variables, (parent, field) => {
    const what = `${parent.name}.${field.name}`;
    const price = prices.get(what);
    if (price === undefined) return;
    points += price;
    reads.push({ what, points: price });
  });
  return points === work.points ? work : { points, reads: reads.sort((a, b) => b.points - a.points) };
}

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
