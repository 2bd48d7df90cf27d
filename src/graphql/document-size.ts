import { GraphQLError, getNamedType, isLeafType, isListType, isNonNullType, type DocumentNode, type GraphQLOutputType, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity';
import type { ResourceRegistry } from '../model/resource-registry.ts';
import { connectionOrder } from '../sql/sql-builder.ts';
import { isApiError } from '../errors.ts';
import { MAX_PAGE_SIZE, parseConnectionArguments } from '../loaders/connection-arguments.ts';
import { connectionList } from '../loaders/loaders.ts';
import { listIndexOf, type ListIndex } from './connections.ts';
import { introspectionListLengths } from './introspection-size.ts';

function isList(type: GraphQLOutputType): boolean {
  return isListType(isNonNullType(type) ? type.ofType : type);
}

interface Problem {
  /** Where in the document. */
  at: number;
  error: GraphQLError;
}

/** A refusal of the request's document or arguments, before anything runs. */
export const refusal = (message: string) => new GraphQLError(message, { extensions: { code: 'invalid_request', http: { status: 400 } } });

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
function listSizeEstimator(index: ListIndex, introspection: ReadonlyMap<string, number>, registry: ResourceRegistry, problems: Problem[]): ComplexityEstimator {
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

/**
 * The size check of a document (docs/internal-graphql.md, Limits: Size): what one answer can hold,
 * fields times the rows of the lists that hold them, at most `maxSize`. Bad connection arguments,
 * lists without a page size and arguments holding U+0000 are refused by the same walk, the first in
 * the document first.
 */
export function documentSize(schema: GraphQLSchema, registry: ResourceRegistry, maxSize: number, boundedLists?: ReadonlyMap<string, number>) {
  const index = listIndexOf(schema);
  // Lists that are no connection but have a known bound (\`Type.field\` → its rows) count as the introspection lists do.
  const introspection = new Map([...introspectionListLengths(schema), ...(boundedLists ?? [])]);
  return (document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>): void => {
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
        variables,
        estimators: [listSizeEstimator(index, introspection, registry, problems)],
      }));
    } catch (error) {
      // Arguments that do not fit their types, found while estimating.
      if (error instanceof GraphQLError) throw refusal(error.message);
      throw error;
    }
    // The first problem in the document, not the first the estimate met (it meets inner fields first).
    const first = problems.sort((a, b) => a.at - b.at)[0];
    if (first) throw first.error;
    if (size > maxSize) throw refusal(`Query size ${size} exceeds the limit of ${maxSize}; select fewer fields or lower "first".`);
  };
}
