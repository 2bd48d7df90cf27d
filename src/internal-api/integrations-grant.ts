import type { ApolloServerPlugin } from '@apollo/server';
import { getVariableValues, type GraphQLSchema } from 'graphql';
import type { InternalPrincipal } from '../auth/internal-token-store.ts';
import { ApiError } from '../errors.ts';
import { eachSelectedField } from '../graphql/selection.ts';
import { INTEGRATION_ROOT_FIELDS } from '../integrations/graphql-schema.ts';
import { graphqlRefusal } from '../graphql/work/budget.ts';

/**
 * A token without the integrations grant is refused, before anything runs, an operation that
 * selects the integrations area (`Query.integrations`, any mutation): `403` with code
 * `INTEGRATIONS_NOT_GRANTED`, naming the fields and how an operator grants it, as the
 * personal-data grant is refused (personal-data-grant.ts).
 */
export function useIntegrationsGrant(schema: GraphQLSchema): ApolloServerPlugin<{ principal: InternalPrincipal }> {
  return {
    async requestDidStart({ contextValue }) {
      const { principal } = contextValue;
      if (principal.integrations) return;
      return {
        async didResolveOperation({ document, operation, request }) {
          if (!operation) return;
          const variables = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
          if (!variables.coerced) return;
          const uses = new Set<string>();
          eachSelectedField(schema, document, operation, variables.coerced, (parent, field) => {
            const name = `${parent.name}.${field.name}`;
            if (INTEGRATION_ROOT_FIELDS.has(name)) uses.add(name);
          });
          if (uses.size === 0) return;
          throw graphqlRefusal(
            new ApiError(
              'INTEGRATIONS_NOT_GRANTED',
              `This token has no integrations grant, and the operation uses the integrations area: ${[...uses].join(', ')}. ` +
                `An operator grants it with: npm run admin -- internal-token update --name ${principal.name} --integrations`,
            ),
          );
        },
      };
    },
  };
}
