import type { ApolloServerPlugin } from '@apollo/server';
import {
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import type { InternalPrincipal } from '../auth/internal-token-store.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';

/** A field of the schema an operation selects. */
interface FieldUse {
  type: string;
  field: string;
  deprecationReason: string | null;
}

/** A deprecated field is logged once per token and field in this time. */
const DEPRECATED_LOG_INTERVAL_MS = 60 * 60 * 1000;

/**
 * The schema's fields an operation selects, through the fragments it spreads, each once; GraphQL's
 * own introspection fields (`__typename`, `__schema`, `__type` and the `__` types) are not the
 * schema's and are left out.
 */
export function fieldsSelected(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): FieldUse[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const uses = new Map<string, FieldUse>();
  const pending: Array<OperationDefinitionNode | FragmentDefinitionNode> = [operation];
  const spread = new Set<string>();
  const typeInfo = new TypeInfo(schema);
  const visitor = visitWithTypeInfo(typeInfo, {
    Field() {
      const parent = typeInfo.getParentType();
      const field = typeInfo.getFieldDef();
      if (!parent || !field || parent.name.startsWith('__') || field.name.startsWith('__')) return;
      const key = `${parent.name}.${field.name}`;
      if (!uses.has(key)) uses.set(key, { type: parent.name, field: field.name, deprecationReason: field.deprecationReason ?? null });
    },
    FragmentSpread(node) {
      const fragment = fragments.get(node.name.value);
      if (fragment && !spread.has(fragment.name.value)) {
        spread.add(fragment.name.value);
        pending.push(fragment);
      }
    },
  });
  for (let next = pending.pop(); next; next = pending.pop()) visit(next, visitor);
  return [...uses.values()];
}

/**
 * Field usage (docs/internal-graphql.md): every operation that ran counts one use of each field
 * it selects, by type, field and token name, in `internal_graphql_field_uses_total` (so at most
 * the schema's fields times the tokens); a deprecated field used is logged once per token and
 * field an hour, naming both, so that a maintainer knows who still reads it before removing it.
 */
export function useFieldUsage(schema: GraphQLSchema, metrics: Metrics, logger: Logger): ApolloServerPlugin<{ principal: InternalPrincipal }> {
  const byDocument = new LRUCache<string, FieldUse[]>({ max: 1000 });
  const logged = new LRUCache<string, true>({ max: 10_000, ttl: DEPRECATED_LOG_INTERVAL_MS });
  return {
    async requestDidStart() {
      return {
        // Counted once the answer is known: a request refused before it ran (variables that do
        // not fit, a spent budget) has no `data` and counts nothing.
        async willSendResponse({ contextValue, document, operation, queryHash, response }) {
          if (!document || !operation || response.body.kind !== 'single' || response.body.singleResult.data === undefined) return;
          const key = `${queryHash}\u0000${operation.name?.value ?? ''}`;
          let uses = byDocument.get(key);
          if (!uses) {
            uses = fieldsSelected(schema, document, operation);
            byDocument.set(key, uses);
          }
          const token = contextValue.principal.name;
          for (const use of uses) {
            metrics.internalFieldUses.inc({ type: use.type, field: use.field, token });
            if (use.deprecationReason === null) continue;
            const once = `${token}\u0000${use.type}.${use.field}`;
            if (logged.has(once)) continue;
            logged.set(once, true);
            logger.warn({ tokenName: token, field: `${use.type}.${use.field}`, deprecationReason: use.deprecationReason }, 'deprecated field used');
          }
        },
      };
    },
  };
}
