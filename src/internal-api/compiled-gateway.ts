import type { ApolloServerOptionsWithGateway, BaseContext } from '@apollo/server';
import type { GraphQLSchema } from 'graphql';
import { executeValidated } from '../graphql/compiled-execution.ts';
import type { GraphQLContext } from '../graphql/schema.ts';

type Gateway = ApolloServerOptionsWithGateway<BaseContext>['gateway'];

/**
 * Apollo Server's one hook for running an operation otherwise than with graphql-js's `execute`:
 * a gateway whose schema is the served one, unchanged, and whose executor runs the document Apollo
 * Server parsed, validated and passed through every plugin, compiled by graphql-jit once per
 * document (`executeValidated`). Everything before execution (the limits, the cost budget, personal
 * data, trusted documents) and after it (error masking, the audit line) is Apollo Server's as before.
 */
export function compiledGateway(schema: GraphQLSchema): Gateway {
  return {
    load: async () => ({
      executor: (request) =>
        executeValidated(schema, request.document, request.operation ?? undefined, request.request.operationName, request.request.variables, request.context as GraphQLContext),
    }),
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => undefined;
    },
    stop: async () => undefined,
  };
}
