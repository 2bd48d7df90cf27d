import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import { getVariableValues, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { ResourceRegistry } from '../../model/resource-registry.ts';
import { listIndexOf } from '../connections.ts';
import { refusal } from '../document-size.ts';
import { eachSelectedField } from '../selection.ts';
import { POINT_MS, estimateWork, type WorkEstimate } from './estimate.ts';
import type { TableSizes } from './table-statistics-store.ts';

export interface CostLimitOptions {
  registry: ResourceRegistry;
  /** The cap: the largest work estimate of one request, in points (`estimateWork`). */
  maxCost: number;
  /** The table sizes the work estimate reads. */
  sizes: TableSizes;
  /** The document's shape checks that need its variables (the size), before the work is estimated; throws the refusal. */
  shape: (document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>) => void;
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
 * Refuses, before anything runs and with a clear GraphQL error: variables that do not fit their
 * types, what the document's `shape` check refuses, and queries whose work estimate
 * (`estimateWork`: what their statements can read) exceeds the cap, naming the reads that make
 * it; hands the estimate of every other request to `spend`. A request whose operation Apollo
 * Server did not resolve (an unknown operation name, several anonymous operations) is left to its
 * refusal: nothing is estimated, nothing spent.
 */
export function useCostLimit(schema: GraphQLSchema, options: CostLimitOptions): ApolloServerPlugin {
  const index = listIndexOf(schema);
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
          options.shape(document, operation, request.variables ?? {});
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
