import { timingSafeEqual } from 'node:crypto';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type Express, type RequestHandler } from 'express';
import type { GraphQLSchema } from 'graphql';
import type { Database } from '../db/database.ts';
import type { ResourceRegistry } from '../db/resource.ts';
import { sha256 } from '../auth/secret-format.ts';
import { Loaders } from '../loaders/loaders.ts';
import { maskError, useCostLimit, useDepthLimit } from './plugins.ts';
import type { GraphQLContext } from './schema.ts';

export interface InternalAppOptions {
  schema: GraphQLSchema;
  registry: ResourceRegistry;
  db: Database;
  token: string;
  maxDepth?: number;
  maxCost?: number;
  /** Extra routes of the internal listener (metrics). */
  extend?: (app: Express) => void;
}

export interface InternalApp {
  app: Express;
  stop(): Promise<void>;
}

function requireToken(token: string): RequestHandler {
  const expected = sha256(token);
  return (req, res, next) => {
    const match = /^bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
    // Compare digests so that the comparison takes the same time whatever the length.
    if (match?.[1] && timingSafeEqual(sha256(match[1]), expected)) return next();
    res
      .status(401)
      .set('WWW-Authenticate', 'Bearer')
      .type('application/json; charset=utf-8')
      .send(JSON.stringify({ errors: [{ message: 'A valid internal API token is required.', extensions: { code: 'invalid_api_key' } }] }));
  };
}

/** Apollo Server at /graphql for internal teams: same schema and loaders as the REST facade. */
export async function createInternalApp(options: InternalAppOptions): Promise<InternalApp> {
  const apollo = new ApolloServer<GraphQLContext>({
    schema: options.schema,
    validationRules: [useDepthLimit(options.maxDepth ?? 8)],
    plugins: [useCostLimit(options.schema, options.maxCost ?? 20_000), ApolloServerPluginLandingPageDisabled()],
    formatError: maskError,
    includeStacktraceInErrorResponses: false,
  });
  await apollo.start();
  const app = express();
  app.disable('x-powered-by');
  options.extend?.(app);
  app.use(
    '/graphql',
    requireToken(options.token),
    express.json({ limit: '100kb' }),
    expressMiddleware(apollo, {
      context: async () => ({ loaders: new Loaders(options.registry, options.db) }),
    }),
  );
  return { app, stop: () => apollo.stop() };
}
