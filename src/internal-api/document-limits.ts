import type { ApolloServerOptions, BaseContext } from '@apollo/server';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { GraphQLSchema, ValidationRule } from 'graphql';
import type { ResourceRegistry } from '../model/resource-registry.ts';
import { documentSize } from '../graphql/document-size.ts';

/**
 * What a document sent to the internal endpoint may hold (docs/internal-graphql.md, Limits): its
 * shape. What its statements may cost (the cap, the budget, the database time) is the work's
 * (`src/graphql/work/`).
 */
export interface DocumentLimits {
  /** Field nesting, fragments flattened; a connection adds two levels (edges, node). */
  maxDepth: number;
  /** Aliased fields in an operation, through its fragments. */
  maxAliases: number;
  /** Directives in an operation. */
  maxDirectives: number;
  /** Lexical tokens of the document, counted while it is parsed. */
  maxTokens: number;
  /** Selections of an operation with every fragment spread expanded. */
  maxRecursiveSelections: number;
  /** Fields times the rows of the lists that hold them: what one response can hold (`documentSize`). */
  maxSize: number;
}

export const DOCUMENT_LIMITS: DocumentLimits = {
  maxDepth: 10,
  maxAliases: 15,
  maxDirectives: 50,
  maxTokens: 1_000,
  maxRecursiveSelections: 2_000,
  maxSize: 20_000,
};

type Limited = Required<Pick<ApolloServerOptions<BaseContext>, 'maxRecursiveSelections' | 'parseOptions' | 'allowBatchedHttpRequests'>> & {
  validationRules: ValidationRule[];
  /** The size check, which needs the request's variables: run by the cost limit before the work is estimated. */
  size: ReturnType<typeof documentSize>;
};

/**
 * The limits every document meets before anything runs, each refused with a coded 400:
 * - tokens by graphql-js's own parser (`parseOptions.maxTokens`: GRAPHQL_PARSE_FAILED), so that a
 *   huge or deeply nested document is never parsed whole;
 * - selections through fragments by Apollo Server (`maxRecursiveSelections`), so that fragments
 *   spread into each other cannot make validation and the cost estimate walk millions of fields;
 * - depth, aliases and directives by GraphQL Armor's validation rules (GRAPHQL_VALIDATION_FAILED);
 *   they keep their place alongside graphql-js's fragment-cycle rule without recursing through a
 *   cycle;
 * - the size by `documentSize` (invalid_request), after validation, from the cost limit
 *   (`useCostLimit`), which then estimates the work: GraphQL Armor's cost rule weighs fields by
 *   depth and cannot see page sizes, which bound the rows a list returns.
 * GraphQL Armor's field-suggestion masking stays off: internal teams read the schema anyway.
 */
export function documentLimits(schema: GraphQLSchema, registry: ResourceRegistry, limits: DocumentLimits, boundedLists?: ReadonlyMap<string, number>): Limited {
  const armor = new ApolloArmor({
    maxDepth: { n: limits.maxDepth, flattenFragments: true, ignoreIntrospection: true },
    maxAliases: { n: limits.maxAliases, allowList: [] },
    maxDirectives: { n: limits.maxDirectives },
    // Counted by graphql-js's parser below: Armor's token plugin throws from a plugin hook, which
    // Apollo Server answers with status 500.
    maxTokens: { enabled: false },
    costLimit: { enabled: false },
    blockFieldSuggestion: { enabled: false },
  }).protect();
  return {
    // The protections enabled above are validation rules only (Armor's plugins are the two turned off).
    validationRules: armor.validationRules,
    size: documentSize(schema, registry, limits.maxSize, boundedLists),
    parseOptions: { maxTokens: limits.maxTokens },
    maxRecursiveSelections: limits.maxRecursiveSelections,
    allowBatchedHttpRequests: false,
  };
}
