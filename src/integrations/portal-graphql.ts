import {
  execute,
  getOperationAST,
  getVariableValues,
  GraphQLError,
  parse,
  validate,
  visit,
  type DocumentNode,
  type ExecutionResult,
  type GraphQLSchema,
} from 'graphql';
import { ApiError, isApiError } from '../errors.ts';
import { maskError } from '../graphql/masked-errors.ts';
import { eachSelectedField } from '../graphql/selection.ts';
import type { Logger } from '../logger.ts';
import { PAGE_ROOT_FIELDS, type IntegrationsRequest } from './graphql-schema.ts';

/** What the page's endpoint answers: a status and GraphQL's JSON. */
export interface PortalGraphQLAnswer {
  status: number;
  body: string;
}

/** The most fields of the area one document selects at its root and under `integrations`: what one page view needs, not a way to multiply work by aliases. */
const MAX_ROOT_FIELDS = 1;
const MAX_AREA_FIELDS = 10;

const refusal = (error: ApiError): PortalGraphQLAnswer => ({
  status: error.status,
  body: JSON.stringify({ errors: [{ message: error.message, extensions: error.field === undefined ? { code: error.code } : { code: error.code, field: error.field } }] }),
});

const graphqlErrors = (status: number, code: string, errors: readonly GraphQLError[]): PortalGraphQLAnswer => ({
  status,
  body: JSON.stringify({ errors: errors.map((error) => ({ message: error.message, locations: error.locations, extensions: { code } })) }),
});

interface Body {
  query: string;
  variables: Record<string, unknown>;
  operationName: string | undefined;
}

function bodyOf(given: unknown): Body | ApiError {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return new ApiError('invalid_request', 'The body is a JSON object: { "query": …, "variables": … }.');
  const { query, variables, operationName } = given as Record<string, unknown>;
  if (typeof query !== 'string' || query.trim() === '') return new ApiError('invalid_request', 'The body has no "query" (a GraphQL document as a string).');
  if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return new ApiError('invalid_request', '"variables" is a JSON object.');
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return new ApiError('invalid_request', '"operationName" is a string.');
  return { query, variables: (variables as Record<string, unknown> | null | undefined) ?? {}, operationName: (operationName as string | null | undefined) ?? undefined };
}

/** Introspection is internal GraphQL's (its explorer); the page's endpoint serves the area's fields alone. */
function asksIntrospection(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (node.name.value === '__schema' || node.name.value === '__type') found = true;
    },
  });
  return found;
}

/**
 * Runs one document of the integrations area for the page's session, through the schema internal
 * GraphQL serves and its resolvers (src/integrations/graphql-schema.ts), the one way each
 * operation runs. Before anything runs: only the area's fields (no other query field, no new
 * link, no introspection), few of them, and no mutation in a read-only session.
 */
export async function runPortalGraphQL(schema: GraphQLSchema, request: IntegrationsRequest, given: unknown, logger: Logger): Promise<PortalGraphQLAnswer> {
  const body = bodyOf(given);
  if (isApiError(body)) return refusal(body);
  let document: DocumentNode;
  try {
    document = parse(body.query, { maxTokens: 2000 });
  } catch (error) {
    if (error instanceof GraphQLError) return graphqlErrors(400, 'GRAPHQL_PARSE_FAILED', [error]);
    throw error;
  }
  const invalid = validate(schema, document);
  if (invalid.length > 0) return graphqlErrors(400, 'GRAPHQL_VALIDATION_FAILED', invalid);
  const operation = getOperationAST(document, body.operationName);
  if (!operation) return refusal(new ApiError('invalid_request', 'The document names no operation to run (give operationName).'));
  if (operation.operation === 'subscription') return refusal(new ApiError('FORBIDDEN', 'Only queries and mutations of the integrations area are served here.'));
  const variables = getVariableValues(schema, operation.variableDefinitions ?? [], body.variables);
  if (variables.errors) return graphqlErrors(400, 'BAD_USER_INPUT', variables.errors);
  if (asksIntrospection(document)) return refusal(new ApiError('FORBIDDEN', 'Only the integrations area is served here: no introspection.'));
  const outside = new Set<string>();
  let roots = 0;
  let areaFields = 0;
  eachSelectedField(schema, document, operation, variables.coerced, (parent, field) => {
    const name = `${parent.name}.${field.name}`;
    if (parent === schema.getQueryType() || parent === schema.getMutationType()) {
      roots += 1;
      if (!PAGE_ROOT_FIELDS.has(name)) outside.add(name);
    } else if (parent.name === 'Integrations') areaFields += 1;
  });
  if (outside.size > 0) return refusal(new ApiError('FORBIDDEN', `Only the integrations area is served here, not: ${[...outside].join(', ')}`));
  if (roots > MAX_ROOT_FIELDS || areaFields > MAX_AREA_FIELDS) {
    return refusal(new ApiError('FORBIDDEN', `One document selects at most ${MAX_ROOT_FIELDS} root field and ${MAX_AREA_FIELDS} fields of integrations.`));
  }
  if (operation.operation === 'mutation' && request.session?.readOnly) return refusal(new ApiError('READ_ONLY_SESSION'));
  const result = (await execute({ schema, document, variableValues: body.variables, operationName: body.operationName, contextValue: { integrations: request } })) as ExecutionResult;
  const errors = result.errors?.map((error) => {
    const masked = maskError(error.toJSON(), error);
    if (masked.extensions?.code === 'internal_error') logger.error({ err: error.originalError ?? error, path: error.path }, 'integrations page request failed');
    return masked;
  });
  return { status: 200, body: JSON.stringify(errors ? { data: result.data ?? null, errors } : { data: result.data ?? null }) };
}
