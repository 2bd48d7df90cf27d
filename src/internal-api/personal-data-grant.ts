import type { ApolloServerPlugin } from '@apollo/server';
import { getArgumentValues, getNamedType, getVariableValues, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { InternalPrincipal } from '../auth/internal-token-store.ts';
import { personalFields, type ResourceDefinition, type ResourceRegistry } from '../model/resource-registry.ts';
import { ApiError } from '../errors.ts';
import { connectionTypeName, edgeTypeName, filterTypeName } from '../graphql/connections.ts';
import { eachSelectedField } from '../graphql/selection.ts';
import { graphqlRefusal } from '../graphql/work/budget.ts';

/**
 * What an operation would read or compare of personal data: the fields it selects that are
 * personal (`Instructor.email`), the fields that return a resource that is personal as a whole
 * (`Booking.participant`, and its connections), and the filter conditions on personal fields
 * (`InstructorFilter.email`), and the fields outside the registry that hold personal data
 * (`others`: a member's e-mail in the integrations audit), each named once, in document order.
 */
function personalUses(schema: GraphQLSchema, registry: ResourceRegistry, others: ReadonlySet<string>): (document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>) => string[] {
  const wholly = new Set<string>();
  const filters = new Map<string, ResourceDefinition>();
  for (const resource of registry.all()) {
    if (resource.personalData) for (const type of [resource.name, connectionTypeName(resource.name), edgeTypeName(resource.name)]) wholly.add(type);
    filters.set(filterTypeName(resource.name), resource);
  }
  return (document, operation, variables) => {
    const uses = new Set<string>();
    eachSelectedField(schema, document, operation, variables, (parent, field, node) => {
      const resource = registry.has(parent.name) ? registry.get(parent.name) : undefined;
      const name = `${parent.name}.${field.name}`;
      if (wholly.has(getNamedType(field.type).name) || (resource && personalFields(resource).has(field.name)) || others.has(name)) uses.add(name);
      const filterArgument = field.args.find((argument) => argument.name === 'filter');
      const target = filterArgument && filters.get(getNamedType(filterArgument.type).name);
      if (!target) return;
      let filter: unknown;
      try {
        filter = getArgumentValues(field, node, variables).filter;
      } catch {
        // An argument that does not fit its type is refused by the cost limit's check of arguments.
        return;
      }
      if (typeof filter !== 'object' || filter === null) return;
      const personal = personalFields(target);
      for (const [name, condition] of Object.entries(filter)) {
        if (personal.has(name) && condition !== null && condition !== undefined) uses.add(`${filterTypeName(target.name)}.${name}`);
      }
    });
    return [...uses];
  };
}

/**
 * A token without the personal-data grant is refused, before anything runs, an operation that
 * selects or filters on personal data: `403` with code `PERSONAL_DATA_NOT_GRANTED`, naming each
 * field (docs/internal-graphql.md, Personal data). The schema is the same for every token; the
 * refusal says what is missing and how an operator grants it, where a field left out of the
 * schema or answered `null` would say neither.
 */
export function usePersonalDataGrant(schema: GraphQLSchema, registry: ResourceRegistry, others: ReadonlySet<string> = new Set()): ApolloServerPlugin<{ principal: InternalPrincipal }> {
  const usesOf = personalUses(schema, registry, others);
  return {
    async requestDidStart({ contextValue }) {
      const { principal } = contextValue;
      if (principal.personalData) return;
      return {
        async didResolveOperation({ document, operation, request }) {
          if (!operation) return;
          // Defaults applied, as execution applies them; variables that do not fit are refused by the cost limit.
          const variables = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
          if (!variables.coerced) return;
          const uses = usesOf(document, operation, variables.coerced);
          if (uses.length === 0) return;
          throw graphqlRefusal(
            new ApiError(
              'PERSONAL_DATA_NOT_GRANTED',
              `This token has no personal-data grant, and the operation reads or filters on personal data: ${uses.join(', ')}. ` +
                `An operator grants it with: npm run admin -- internal-token update --name ${principal.name} --personal-data`,
            ),
          );
        },
      };
    },
  };
}
