import { timingSafeEqual } from 'node:crypto';
import { ApolloServer } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import express, { type Express, type RequestHandler, type Response } from 'express';
import type { GraphQLFormattedError, GraphQLSchema } from 'graphql';
import { BOOTSTRAP_TOKEN_NAME, findActiveInternalToken, type InternalPrincipal } from '../auth/internal-token-store.ts';
import { isWellFormedInternalToken, sha256 } from '../auth/secret-format.ts';
import type { Database, StatementMeter } from '../db/database.ts';
import { TableStatistics } from '../graphql/work/table-statistics-store.ts';
import type { ResourceRegistry } from '../model/resource-registry.ts';
import { ApiError, DatabaseTimeSpent, isDatabaseUnavailable, isStatementTimeout } from '../errors.ts';
import { requestContext } from '../graphql/execute-operation.ts';
import { maskError } from '../graphql/masked-errors.ts';
import { POINT_MS } from '../graphql/work/estimate.ts';
import { CostBudget, useCostBudget, type SpentCost } from '../graphql/work/budget.ts';
import { useCostLimit } from '../graphql/work/cost-limit.ts';
import type { GraphQLContext } from '../graphql/schema.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { RateLimiters } from '../rate-limit/limiters.ts';
import { auditRecordOf, useAuditPlugin, useAuditTrail, type AuditRecord } from './audit-trail.ts';
import { compiledGateway } from './compiled-gateway.ts';
import { documentGate } from './document-gate.ts';
import { DOCUMENT_LIMITS, documentLimits } from './document-limits.ts';
import { explorerRouter } from './explorer-page.ts';
import { graphqlHandler, stringifyResult } from './graphql-handler.ts';
import { useFieldUsage } from './field-usage.ts';
import { usePersonalDataGrant } from './personal-data-grant.ts';
import { useIntegrationsGrant } from './integrations-grant.ts';
import type { IntegrationContext } from '../integrations/context.ts';
import { INTEGRATION_FIELD_POINTS, type IntegrationsRequest } from '../integrations/graphql-schema.ts';
import { INTEGRATION_LIST_BOUNDS, INTEGRATION_PERSONAL_FIELDS } from '../integrations/graphql-sdl.ts';
import { answerErrors, notFound, sendListenerError } from './listener-errors.ts';
import { metricsRouter } from './metrics-route.ts';

export interface InternalAppOptions {
  schema: GraphQLSchema;
  registry: ResourceRegistry;
  /**
   * The primary, through internal GraphQL's own pool (`openPoolBeside`): its connections and
   * statement timeout are not the public API's. Tokens and documents are looked up here.
   */
  db: Database;
  /** The primary through the service's own pool: the table statistics are read there, outside the share. */
  primary: Pick<Database, 'pool'>;
  /**
   * Where a request's reads go: internal GraphQL's pool on a replica that keeps up, chosen once
   * per request so that all its statements read one server; `db` when absent.
   */
  reads?: (() => Database) | undefined;
  /** INTERNAL_API_TOKEN: the operators' bootstrap token, every workspace. */
  token: string;
  logger: Logger;
  metrics: Metrics;
  /** METRICS_TOKEN: opens /metrics alone. */
  metricsToken?: string | undefined;
  /** The store the cost budgets share with the public rate limits. */
  rateLimiters: Pick<RateLimiters, 'costs'>;
  /** INTERNAL_COST_PER_MINUTE: the budget of a token without one of its own. */
  defaultCostPerMinute: number;
  /** INTERNAL_COST_PER_REQUEST: the cap, the largest work estimate of one request, in points. */
  costPerRequest: number;
  /** The statement timeout of `db` (`internalStatementTimeoutMs`), as the error of a statement it cancelled says it. */
  statementTimeoutMs: number;
  /** What the integrations area's operations run with (src/integrations), for tokens with the grant. */
  integrations: IntegrationContext;
}

export interface InternalApp {
  app: Express;
  stop(): Promise<void>;
}

type InternalContext = GraphQLContext & { audit: AuditRecord; principal: InternalPrincipal; cost: SpentCost; meter: StatementMeter; integrations?: IntegrationsRequest | undefined };

/** How often the table sizes the cost estimate reads are read again from PostgreSQL's statistics. */
const STATISTICS_REFRESH_MS = 60_000;

/** The largest request body /graphql reads. */
const MAX_BODY = { bytes: 100 * 1024, text: '100 kB' };

const REFUSALS = {
  401: () => new ApiError('invalid_api_key', 'A valid internal API token is required.', { headers: { 'WWW-Authenticate': 'Bearer' } }),
  500: () => new ApiError('internal_error'),
  503: () => new ApiError('service_unavailable', undefined, { headers: { 'Retry-After': '5' } }),
} as const;

function refuse(res: Response, status: keyof typeof REFUSALS): void {
  const error = REFUSALS[status]();
  auditRecordOf(res).errorCodes = [error.code];
  sendListenerError(res, error, true);
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
      principal = { id: null, name: BOOTSTRAP_TOKEN_NAME, workspaces: null, documents: 'any', costPerMinute: null, personalData: true, integrations: true };
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
 * GraphQL Armor's rules write "Syntax Error: " before their messages; a document over a limit
 * parsed well, and its error says so by its code.
 */
function withoutSyntaxPrefix(error: GraphQLFormattedError): GraphQLFormattedError {
  const prefix = 'Syntax Error: ';
  return error.extensions?.code === 'GRAPHQL_VALIDATION_FAILED' && error.message.startsWith(prefix) ? { ...error, message: error.message.slice(prefix.length) } : error;
}

/**
 * Apollo Server at /graphql for internal teams: same schema and loaders as the REST facade, a
 * token restricted to workspaces reads through loaders restricted to them, one audit line per
 * request.
 */
export async function createInternalApp(options: InternalAppOptions): Promise<InternalApp> {
  const { logger } = options;
  const budget = new CostBudget(options.rateLimiters.costs, {
    defaultPerMinute: options.defaultCostPerMinute,
    capPoints: options.costPerRequest,
    refused: () => (options.metrics.requestCounts.rateLimitRejections('internal_cost').count += 1),
  });
  const statistics = new TableStatistics(options.registry.all().map((resource) => resource.table));
  const refresh = () => statistics.refresh(options.primary).catch((error: unknown) => logger.warn({ err: error }, 'table statistics not read; the cost estimate keeps the last ones'));
  await refresh();
  const refreshing = setInterval(() => void refresh(), STATISTICS_REFRESH_MS);
  refreshing.unref();
  const limits = documentLimits(options.schema, options.registry, DOCUMENT_LIMITS, INTEGRATION_LIST_BOUNDS);
  const costLimit = useCostLimit(options.schema, {
    registry: options.registry,
    maxCost: options.costPerRequest,
    sizes: statistics,
    shape: limits.size,
    fieldPoints: INTEGRATION_FIELD_POINTS,
    spend: async (estimate, request) => {
      const context = request.contextValue as InternalContext;
      const allowance = await budget.reserve(context.principal, estimate.points, context.cost);
      // The embedded engine runs every connection's statements in turn: a statement's time there is
      // mostly the wait for others' (the public API's, a key activity flush), not its own work, and
      // it cannot be cancelled. A request is charged what its statements took, never stopped for it.
      if (options.db.kind !== 'embedded') context.meter.allowance = allowance;
    },
  });
  const apollo = new ApolloServer<InternalContext>({
    // The served schema, its operations compiled once per document (compiled-gateway.ts).
    gateway: compiledGateway(options.schema),
    validationRules: limits.validationRules,
    parseOptions: limits.parseOptions,
    maxRecursiveSelections: limits.maxRecursiveSelections,
    allowBatchedHttpRequests: limits.allowBatchedHttpRequests,
    // Documents named by hash are the registered ones (document-gate.ts), never a cache a client fills.
    persistedQueries: false,
    // The answer's JSON; graphqlHandler writes it with its newline (graphql-handler.ts).
    stringifyResult,
    // The explorer is ours (explorer-page.ts): Apollo's landing page would load its code from a CDN.
    plugins: [
      usePersonalDataGrant(options.schema, options.registry, INTEGRATION_PERSONAL_FIELDS),
      useIntegrationsGrant(options.schema),
      costLimit,
      useCostBudget(budget, ({ meter }) => Math.ceil(meter.ms / POINT_MS)),
      useFieldUsage(options.schema, options.metrics, logger),
      useAuditPlugin(),
      ApolloServerPluginLandingPageDisabled(),
      // No field carries a cache hint; its per-field hook made Apollo Server wrap every resolver of the
      // schema, a closure and a promise check per field and row (docs/benchmarks.md).
      ApolloServerPluginCacheControlDisabled(),
    ],
    formatError: (formatted, error) => {
      const original = unwrapResolverError(error);
      // Its message is the budget's own (src/graphql/work/budget.ts): why the statements stopped.
      if (original instanceof DatabaseTimeSpent) return { message: original.message, path: formatted.path, extensions: { code: 'QUERY_TIMEOUT' } };
      if (isStatementTimeout(unwrapResolverError(error))) {
        const message = `A statement of this request ran longer than the statement timeout of internal GraphQL (${options.statementTimeoutMs} ms) and was cancelled; read fewer rows, filter on indexed columns or leave out totalCount.`;
        return { message, path: formatted.path, extensions: { code: 'QUERY_TIMEOUT' } };
      }
      const masked = withoutSyntaxPrefix(maskError(formatted, error));
      if (masked.extensions?.code === 'internal_error') logger.error({ err: unwrapResolverError(error), path: formatted.path }, 'internal graphql request failed');
      return masked;
    },
    // Set, not left to NODE_ENV, so that every environment answers alike.
    introspection: true,
    includeStacktraceInErrorResponses: false,
    // Apollo Server's own messages go to the JSON log, not to the console.
    logger: {
      debug: (message: unknown) => logger.debug({ apollo: true }, String(message)),
      info: (message: unknown) => logger.info({ apollo: true }, String(message)),
      warn: (message: unknown) => logger.warn({ apollo: true }, String(message)),
      error: (message: unknown) => logger.error({ apollo: true }, String(message)),
    },
  });
  await apollo.start();
  const app = express();
  app.disable('x-powered-by');
  // A GraphQL answer is the result of one POST: express's ETag hashed every body (100 kB for a
  // page of runs with their sessions) for a header no client revalidates with.
  app.set('etag', false);
  app.use(metricsRouter(options.metrics, [options.token, options.metricsToken]));
  // Before the token check: the page and its assets hold no data; the queries it sends carry the token.
  app.use(explorerRouter());
  app.use(
    '/graphql',
    useAuditTrail(logger),
    authenticate(options.db, options.token, logger),
    express.json({ limit: MAX_BODY.bytes }),
    documentGate({ db: options.db, budget, metrics: options.metrics, logger }),
    graphqlHandler(apollo, async (_req, res) => {
      const principal = (res.locals as { principal: InternalPrincipal }).principal;
      const meter: StatementMeter = { statements: 0, ms: 0 };
      const reads = (options.reads?.() ?? options.db).metered(meter);
      const context = requestContext({ registry: options.registry, db: reads }, { workspaces: principal.workspaces, personalData: principal.personalData });
      const audit = auditRecordOf(res);
      audit.rows = () => context.loaders.rowsRead;
      audit.personalColumns = () => context.loaders.personalColumnsRead;
      const integrations = principal.integrations ? { context: options.integrations, workspaces: principal.workspaces, meter } : undefined;
      return { ...context, audit, principal, meter, integrations, cost: { estimate: 0, reserved: null, extension: null } };
    }),
  );
  app.use(notFound, answerErrors(logger, MAX_BODY.text));
  return {
    app,
    stop: () => {
      clearInterval(refreshing);
      return apollo.stop();
    },
  };
}
