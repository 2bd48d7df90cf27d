import { readFileSync } from 'node:fs';
import type { GraphQLSchema } from 'graphql';
import { createPublicApp } from '../rest/app.ts';
import { AnswerCache } from './answer-cache/answer-cache.ts';
import { Authenticator } from './auth/authenticator.ts';
import { IssuedCredentials } from './auth/issued-credentials.ts';
import { KeyActivity } from './auth/key-activity.ts';
import { preparedStatementsSetting, publicBaseUrl, type Config } from './config.ts';
import { openDatabase, openPoolBeside, type Database, type PoolShare } from './db/database.ts';
import { personaliseTemplateCopy } from './db/embedded-template.ts';
import { copyTemplateForStart } from './demo/demo-fixture.ts';
import { migrate } from './db/migrate.ts';
import { ReplicaSet } from './db/replicas.ts';
import type { ResourceModel } from './model/resource-model.ts';
import { databaseDifferences, serviceModel, staleBuild } from './model/service-model.ts';
import { joinedResource } from './sql/sql-builder.ts';
import { compileOperations } from './graphql/operations.ts';
import { cacheSources } from './graphql/cache-sources.ts';
import { PieceVersionStore } from './answer-cache/piece-version-store.ts';
import type { InternalApp } from './internal-api/internal-app.ts';
import { createSchema, internalSchema } from './graphql/schema.ts';
import { integrationContext, type IntegrationContext } from './integrations/context.ts';
import { withIntegrations } from './integrations/graphql-schema.ts';
import { closeServer, createListener, listen, urlOf } from './listeners.ts';
import { createRedactor, type Logger } from './logger.ts';
import { ApiError } from './errors.ts';
import { packagePath } from './package-root.ts';
import { Metrics } from './observability/metrics.ts';
import { FailureGuard } from './rate-limit/failure-guard.ts';
import { createRateLimiters, type RateLimiters } from './rate-limit/limiters.ts';
import { internalStatementTimeoutMs } from './graphql/work/allowance.ts';
import { bindUnboundSecrets } from './webhooks/reseal-store.ts';
import { resolveSecretBox } from './webhooks/secret-box.ts';

export const OPENAPI_PATH = packagePath('openapi', 'public-v1.yaml');

export interface ServerOptions {
  config: Config;
  logger: Logger;
  /** An already open database (tests); otherwise one is opened from the configuration. */
  db?: Database;
  /** Another resource model (the catalog of another database with another overlay, in tests). */
  model?: ResourceModel;
  /** The copy of the build's embedded template src/main.ts started (`copyTemplateForStart`); otherwise started here. */
  template?: Promise<boolean>;
  /** Certificates the webhook worker trusts besides the default store (tests; operators use NODE_EXTRA_CA_CERTS). */
  trustedCertificates?: string[];
}

export interface RunningServer {
  readonly db: Database;
  readonly publicUrl: string;
  readonly internalUrl: string | null;
  readonly authenticator: Authenticator;
  /** Keys' last use, request log and daily counts; `flush()` writes what was collected. */
  readonly keyActivity: KeyActivity;
  /** The schema internal GraphQL serves (schema/internal.graphql holds it printed). */
  readonly schema: GraphQLSchema;
  /** What the integration operations run with on this instance (the page's, and the demo's link). */
  readonly integrations: IntegrationContext;
  /** Marks the instance as going away: /readyz answers 503 and connections close after their answer. */
  drain(): void;
  close(): Promise<void>;
}

/** Opens (and migrates) the database, then serves the public and, with a token, the internal listener. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { config, logger } = options;
  const stale = options.model ? null : staleBuild();
  if (stale) throw new Error(stale);
  const model = options.model ?? serviceModel();
  const ownsDb = !options.db;
  const template = ownsDb && (await (options.template ?? copyTemplateForStart(config)));
  const db =
    options.db ??
    (await openDatabase({
      url: config.DATABASE_URL,
      directUrl: config.DATABASE_DIRECT_URL,
      preparedStatements: preparedStatementsSetting(config),
      dataDir: config.DATA_DIR,
      shareEmbedded: true,
      poolSize: config.DB_POOL_SIZE,
      statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    }));
  const closers: Array<() => Promise<void>> = [];
  try {
    // Closed last, and on a failed start too, when this start opened it.
    if (ownsDb) closers.push(() => db.close());
    if (template) await personaliseTemplateCopy(db);
    if (db.pooler && db.directConnectionString === db.connectionString) {
      logger.warn('DATABASE_URL leads to a connection pooler and DATABASE_DIRECT_URL is not set: migrations and the webhook worker need session features (advisory locks, LISTEN) a pooler in transaction mode does not keep');
    }
    if (ownsDb) {
      const { applied } = await migrate(db);
      // A template copied just now, and left as it was by the migrations, is the cluster the build
      // compared with this build's whole catalog: the same comparison again would find nothing.
      const asBuilt = template && applied.length === 0 && !options.model;
      const differences = asBuilt ? [] : await databaseDifferences(db, model);
      if (differences.length > 0) {
        throw new Error(`The database disagrees with the catalog this build was made from (src/model/catalog.generated.ts):\n  - ${differences.join('\n  - ')}`);
      }
    }
    const { registry } = model;
    const schema = createSchema(model);
    const operations = compileOperations(schema);
    const rateLimiters: RateLimiters = await createRateLimiters({
      store: config.RATE_LIMIT_STORE,
      max: config.RATE_LIMIT_MAX,
      windowSeconds: config.RATE_LIMIT_WINDOW_S,
      authFailureMax: config.AUTH_FAILURE_LIMIT,
      authFailureWindowSeconds: config.AUTH_FAILURE_WINDOW_S,
      feedMax: config.FEED_RATE_LIMIT_MAX,
      feedWindowSeconds: config.FEED_RATE_LIMIT_WINDOW_S,
      portalMax: config.PORTAL_RATE_LIMIT_MAX,
      portalWindowSeconds: config.PORTAL_RATE_LIMIT_WINDOW_S,
      cleanupIntervalSeconds: config.RATE_LIMIT_CLEANUP_INTERVAL_S,
      redisUrl: config.REDIS_URL,
      db,
    });
    closers.unshift(() => rateLimiters.close());
    const guard = new FailureGuard(rateLimiters.failures);
    const issued = new IssuedCredentials(db, { unknownTtlMs: config.KEY_CACHE_TTL_MS });
    const authenticator = new Authenticator(db, {
      issued,
      guard,
      cacheTtlMs: config.KEY_CACHE_TTL_MS,
      workspace: joinedResource(registry.get('Workspace')),
    });
    const redactor = createRedactor([config.INTERNAL_API_TOKEN, config.METRICS_TOKEN]);
    const keyActivity = new KeyActivity({
      db,
      logger,
      redactor,
      log: config.KEY_REQUEST_LOG,
      flushMs: config.KEY_REQUEST_LOG_FLUSH_MS,
      rowsPerSecond: config.KEY_REQUEST_LOG_ROWS_PER_SECOND,
      maxRows: config.KEY_REQUEST_LOG_MAX_ROWS,
      retentionMs: config.KEY_REQUEST_LOG_RETENTION_DAYS * 86_400_000,
      usageDays: config.KEY_USAGE_RETENTION_DAYS,
      lastUsedIntervalS: config.KEY_LAST_USED_INTERVAL_S,
    });
    closers.unshift(() => keyActivity.close());
    await keyActivity.start();

    // Internal GraphQL's bulkhead: connections and a statement timeout of its own, on the primary and
    // on each replica. The embedded database runs one statement at a time whatever the connections:
    // one connection there keeps internal work to one statement in its queue.
    const internalStatementTimeout = internalStatementTimeoutMs(config.INTERNAL_STATEMENT_TIMEOUT_MS, config.INTERNAL_COST_PER_REQUEST);
    const internalShare: PoolShare = {
      poolSize: db.kind === 'embedded' ? 1 : config.INTERNAL_DB_POOL_SIZE,
      statementTimeoutMs: internalStatementTimeout,
      applicationName: 'course-booking-api-internal',
      preparedStatements: preparedStatementsSetting(config),
    };
    const replicas = config.DATABASE_REPLICA_URL?.length
      ? new ReplicaSet({
          primary: db,
          urls: config.DATABASE_REPLICA_URL,
          maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS,
          open: { poolSize: config.DB_POOL_SIZE, statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS, preparedStatements: preparedStatementsSetting(config) },
          ...(config.INTERNAL_API_TOKEN ? { shares: { internal: internalShare } } : {}),
          onChange: ({ replica, state }, cause) =>
            state === 'ok' ? logger.info({ replica, state }, 'replica takes reads') : logger.warn({ replica, state, err: cause }, 'replica skipped: reads go to the primary'),
        })
      : null;
    if (replicas) {
      closers.unshift(() => replicas.close());
      await replicas.start();
    }

    const metrics = new Metrics(db);
    closers.unshift(async () => metrics.dispose());
    const answerCache = new AnswerCache({
      maxBytes: config.RESPONSE_CACHE_MAX_BYTES,
      db,
      replicas: replicas ? { set: replicas, maxLagMs: config.DATABASE_REPLICA_MAX_LAG_MS } : undefined,
    });
    metrics.observeAnswerCache(answerCache);
    metrics.observeKeyActivity(keyActivity);
    metrics.observeWebhookHealth(async () => (await import('./webhooks/endpoint-store.ts')).readEndpointHealth(db));
    // Resolved even without a worker: the embedded database gets its key on first start, so that
    // `admin` commands and separate workers find it in the data directory.
    const box = await resolveSecretBox(config, { embeddedDataDir: ownsDb && db.kind === 'embedded' });
    // Before anything opens a sealed secret: from then on every one is bound to its endpoint.
    if (box) await bindUnboundSecrets(db, box, logger);
    if (config.WEBHOOK_WORKER) {
      if (box) {
        // Loaded only here: a process that delivers no webhooks never holds the delivery worker's code.
        const { startWebhookWorker } = await import('./webhooks/worker.ts');
        const worker = await startWebhookWorker({
          db,
          config,
          logger,
          box,
          registry,
          bookingOperation: operations.webhookBooking,
          trustedCertificates: options.trustedCertificates,
          onAttempt: (outcome) => metrics.webhookAttempts.inc({ outcome: outcome.error ?? 'success' }),
          onDisabled: () => metrics.webhookEndpointsDisabled.inc(),
        });
        closers.unshift(() => worker.stop());
      } else {
        logger.warn('WEBHOOK_SECRET_KEY is not set: the webhook worker is not started (and no endpoint can be registered)');
      }
    }
    const lifecycle = { draining: false };
    const servedSchema = withIntegrations(internalSchema(schema));
    // No WEBHOOK_SECRET_KEY is the service's configuration, not the client's input: answered as the service's own unavailability.
    const secretBox = async () => box ?? Promise.reject(new ApiError('service_unavailable', 'Webhook endpoints cannot be managed here: WEBHOOK_SECRET_KEY is not set on the service.'));
    const integrationsWith = (database: Database, listening?: string) =>
      integrationContext({ db: database, config, listening, logger, secretBox, trustedCertificates: options.trustedCertificates, registry, bookingOperation: operations.webhookBooking });
    // The integrations page's operations run on the service's own pool; its URL is known once the listener listens.
    const integrations = integrationsWith(db);
    const publicApp = createPublicApp({
      portal: { integrations, schema: servedSchema, rateLimiters, guard, logger },
      lifecycle,
      metrics,
      db,
      registry,
      operations,
      authenticator,
      rateLimiters,
      guard,
      issued,
      answerCache,
      pieceVersions: new PieceVersionStore(cacheSources(schema, registry)),
      replicas: replicas ?? undefined,
      logger,
      keyActivity,
      redactor,
      trustProxy: config.TRUST_PROXY,
      frameAncestors: config.PORTAL_FRAME_ANCESTORS,
      openapiYaml: readFileSync(OPENAPI_PATH, 'utf8'),
    });
    const publicServer = createListener(config, publicApp);
    // Bodies are never read (but by the integrations page's GraphQL endpoint, which continues
    // itself), so there is nothing to continue: answer as if Expect were absent.
    publicServer.on('checkContinue', (req, res) => publicApp(req, res));
    const publicAddress = await listen(publicServer, config.PORT, config.HOST, { port: 'PORT', host: 'HOST' });
    closers.unshift(() => closeServer(publicServer));
    integrations.publicUrl = publicBaseUrl(config, urlOf(publicAddress));

    let internalUrl: string | null = null;
    if (config.INTERNAL_API_TOKEN) {
      const internalDb = await openPoolBeside(db, internalShare);
      closers.unshift(() => internalDb.close());
      metrics.observeInternalPool(internalDb);
      // Loaded only here: Apollo Server and internal GraphQL's plugins cost a start without a token
      // (a newcomer's) the time to load them and serve nothing.
      const { createInternalApp } = await import('./internal-api/internal-app.ts');
      const internal: InternalApp = await createInternalApp({
        schema: servedSchema,
        registry,
        db: internalDb,
        primary: db,
        reads: replicas ? () => replicas.reader()?.shares.get('internal') ?? internalDb : undefined,
        token: config.INTERNAL_API_TOKEN,
        logger,
        metrics,
        metricsToken: config.METRICS_TOKEN,
        rateLimiters,
        defaultCostPerMinute: config.INTERNAL_COST_PER_MINUTE,
        costPerRequest: config.INTERNAL_COST_PER_REQUEST,
        statementTimeoutMs: internalStatementTimeout,
        integrations: integrationsWith(internalDb, urlOf(publicAddress)),
      });
      const internalServer = createListener(config, internal.app);
      const internalAddress = await listen(internalServer, config.INTERNAL_PORT, config.INTERNAL_HOST, { port: 'INTERNAL_PORT', host: 'INTERNAL_HOST' });
      closers.unshift(async () => {
        await closeServer(internalServer);
        await internal.stop();
      });
      internalUrl = urlOf(internalAddress);
    } else {
      logger.warn('INTERNAL_API_TOKEN is not set: the internal listener (GraphQL, metrics) is not started');
    }

    return {
      db,
      publicUrl: urlOf(publicAddress),
      internalUrl,
      authenticator,
      keyActivity,
      schema: servedSchema,
      integrations,
      drain() {
        lifecycle.draining = true;
      },
      async close() {
        for (const close of closers.splice(0)) await close().catch((error: unknown) => logger.error({ err: error }, 'close failed'));
      },
    };
  } catch (error) {
    for (const close of closers.splice(0)) await close().catch(() => {});
    throw error;
  }
}
