import { timingSafeEqual } from 'node:crypto';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type Express, type RequestHandler, type Response } from 'express';
import type { GraphQLSchema } from 'graphql';
import { BOOTSTRAP_TOKEN_NAME, findActiveInternalToken, type InternalPrincipal } from '../auth/internal-token-store.ts';
import { isWellFormedInternalToken, sha256 } from '../auth/secret-format.ts';
import type { Database } from '../db/database.ts';
import type { ResourceRegistry } from '../db/resource-registry.ts';
import { isDatabaseUnavailable } from '../errors.ts';
import { requestContext } from '../graphql/execute-operation.ts';
import { maskError, useCostLimit, useDepthLimit } from '../graphql/plugins.ts';
import type { GraphQLContext } from '../graphql/schema.ts';
import type { Logger } from '../logger.ts';
import { auditRecordOf, useAuditPlugin, useAuditTrail, type AuditRecord } from './audit-trail.ts';

export interface InternalAppOptions {
  schema: GraphQLSchema;
  registry: ResourceRegistry;
  db: Database;
  /** INTERNAL_API_TOKEN: the operators' bootstrap token, every workspace. */
  token: string;
  logger: Logger;
  maxDepth?: number;
  maxCost?: number;
  /** Extra routes of the internal listener (metrics). */
  extend?: (app: Express) => void;
}

export interface InternalApp {
  app: Express;
  stop(): Promise<void>;
}

type InternalContext = GraphQLContext & { audit: AuditRecord };

const REFUSALS = {
  401: { message: 'A valid internal API token is required.', extensions: { code: 'invalid_api_key' } },
  500: { message: 'An unexpected error occurred.', extensions: { code: 'internal_error' } },
  503: { message: 'The service is temporarily unavailable; retry later.', extensions: { code: 'service_unavailable' } },
} as const;

function refuse(res: Response, status: keyof typeof REFUSALS): void {
  res.status(status).type('application/json; charset=utf-8');
  if (status === 401) res.set('WWW-Authenticate', 'Bearer');
  if (status === 503) res.set('Retry-After', '5');
  res.send(JSON.stringify({ errors: [REFUSALS[status]] }));
}

/**
 * The bootstrap token (INTERNAL_API_TOKEN) or an active named token (`admin -- internal-token`),
 * looked up on every request so that a revoked one is refused at once.
 */
function authenticate(db: Database, bootstrapToken: string, logger: Logger): RequestHandler {
  const bootstrap = sha256(bootstrapToken);
  return async (req, res, next) => {
    const presented = /^bearer +(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    let principal: InternalPrincipal | null = null;
    // Compare digests so that the comparison takes the same time whatever the length.
    if (presented && timingSafeEqual(sha256(presented), bootstrap)) {
      principal = { id: null, name: BOOTSTRAP_TOKEN_NAME, workspaces: null };
    } else if (presented && isWellFormedInternalToken(presented)) {
      try {
        principal = await findActiveInternalToken(db, sha256(presented));
      } catch (error) {
        if (isDatabaseUnavailable(error)) return refuse(res, 503);
        logger.error({ err: error }, 'internal token lookup failed');
        return refuse(res, 500);
      }
    }
    if (!principal) return refuse(res, 401);
    const audit = auditRecordOf(res);
    audit.tokenId = principal.id;
    audit.tokenName = principal.name;
    res.locals.principal = principal;
    next();
  };
}

/**
 * Apollo Server at /graphql for internal teams: same schema and loaders as the REST facade, a
 * token restricted to workspaces reads through loaders restricted to them, one audit line per
 * request.
 */
export async function createInternalApp(options: InternalAppOptions): Promise<InternalApp> {
  const apollo = new ApolloServer<InternalContext>({
    schema: options.schema,
    // A connection adds two levels (edges, node) to a list.
    validationRules: [useDepthLimit(options.maxDepth ?? 10)],
    plugins: [
      useCostLimit(options.schema, { registry: options.registry, maxCost: options.maxCost ?? 20_000 }),
      useAuditPlugin(options.schema, options.registry),
      ApolloServerPluginLandingPageDisabled(),
    ],
    formatError: maskError,
    includeStacktraceInErrorResponses: false,
  });
  await apollo.start();
  const app = express();
  app.disable('x-powered-by');
  options.extend?.(app);
  app.use(
    '/graphql',
    useAuditTrail(options.logger),
    authenticate(options.db, options.token, options.logger),
    express.json({ limit: '100kb' }),
    expressMiddleware(apollo, {
      context: async ({ res }) => {
        const principal = (res.locals as { principal: InternalPrincipal }).principal;
        const context = requestContext(options, { workspaces: principal.workspaces });
        const audit = auditRecordOf(res);
        audit.rows = () => context.loaders.rowsRead;
        return { ...context, audit };
      },
    }),
  );
  return { app, stop: () => apollo.stop() };
}
