import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { GraphQLError, Kind, execute, type DocumentNode, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { GraphQLContext } from './schema.ts';

/**
 * A validated document's operation, compiled once by graphql-jit and kept as long as the document
 * is (Apollo Server keeps the documents it parsed and validated, by their text's hash): a trusted
 * document is parsed, validated and compiled once, and every later request only runs it, with no
 * resolver called for a field that is a property of its row. An operation that reads the schema
 * itself (`__schema`, `__type`) runs through graphql-js, as does a request whose operation name
 * names none of the document's (graphql-js gives the error Apollo Server answers it with).
 */
const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery>>();

const introspects = (operation: OperationDefinitionNode) =>
  operation.selectionSet.selections.some((selection) => selection.kind === Kind.FIELD && selection.name.value.startsWith('__') && selection.name.value !== '__typename');

function compiledOperation(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): CompiledQuery | null {
  const name = operation.name?.value ?? '';
  let byName = compiled.get(document);
  let query = byName?.get(name);
  if (query) return query;
  const made = compileQuery(schema, document, operation.name?.value);
  if (!isCompiledQuery(made)) return null;
  query = made;
  if (!byName) {
    byName = new Map();
    compiled.set(document, byName);
  }
  byName.set(name, query);
  return query;
}

/**
 * graphql-jit's errors carry no `extensions` when the error they wrap has none, where graphql-js's
 * always do (Apollo Server reads `extensions.code` of every error): the same error as graphql-js
 * would give, its path and the error thrown kept.
 */
function asGraphQLError(error: GraphQLError): GraphQLError {
  if (error.extensions) return error;
  return new GraphQLError(error.message, { path: error.path, originalError: error.originalError ?? undefined });
}

/** Runs a validated operation: compiled (see above), else through graphql-js. */
export async function executeValidated(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode | undefined,
  operationName: string | undefined,
  variables: Record<string, unknown> | undefined,
  context: GraphQLContext,
): Promise<ExecutionResult> {
  const query = operation && !introspects(operation) ? compiledOperation(schema, document, operation) : null;
  if (!query) return execute({ schema, document, operationName, variableValues: variables, contextValue: context });
  const result = (await query.query(undefined, context, variables ?? {})) as ExecutionResult;
  return result.errors ? { ...result, errors: result.errors.map(asGraphQLError) } : result;
}
