import express, { type Express } from 'express';
import type { IssuedCredentials } from '../src/auth/issued-credentials.ts';
import type { KeyActivity } from '../src/auth/key-activity.ts';
import { activeFeedOf } from '../src/calendar/feed-credential.ts';
import type { ReplicaSet } from '../src/db/replicas.ts';
import type { Logger } from '../src/logger.ts';
import type { Metrics } from '../src/observability/metrics.ts';
import type { FailureGuard } from '../src/rate-limit/failure-guard.ts';
import { dispatch } from './pipeline/dispatch.ts';
import { requestLog } from './pipeline/request-log.ts';
import type { Route } from './pipeline/route-table.ts';
import { apiReferenceRoutes } from './routes/api-reference.ts';
import { calendarFeedRoute } from './routes/calendar-feed.ts';
import { healthRoutes } from './routes/health.ts';
import { integrationsPageRoutes } from './routes/integrations-page.ts';
import { portalRoutes, type PortalDependencies } from './routes/portal.ts';
import { publicV1Routes, type PublicV1Dependencies } from './routes/public-v1.ts';

export interface PublicAppDependencies extends PublicV1Dependencies {
  openapiYaml: string;
  metrics: Metrics;
  lifecycle: { draining: boolean };
  /** The per-address failure limit of credentials (API keys, feed tokens). */
  guard: FailureGuard;
  /** Which API keys and feed tokens are worth a lookup. */
  issued: IssuedCredentials;
  logger: Logger;
  /** Where each request with a valid key is counted (last use, request log); none in tests that need none. */
  keyActivity?: Pick<KeyActivity, 'record'>;
  /** Streaming replicas (DATABASE_REPLICA_URL): /readyz reports each one's state. */
  replicas?: Pick<ReplicaSet, 'statuses'> | undefined;
  /** Express's `trust proxy`: false, a hop count, or the trusted proxies' addresses and ranges. */
  trustProxy?: false | number | string[];
  /** The origins that may show the integrations page in a frame (PORTAL_FRAME_ANCESTORS); none when absent. */
  frameAncestors?: readonly string[];
  /** The integrations page's endpoints; none in tests of the API alone. */
  portal?: PortalDependencies | undefined;
}

/** Every route of the public listener, each its ordered list of steps (rest/pipeline/route-table.ts). */
export function publicRoutes(deps: PublicAppDependencies): Route[] {
  return [
    ...publicV1Routes(deps),
    calendarFeedRoute({ ...deps, activeFeed: (token) => activeFeedOf(deps.db, deps.issued, token) }),
    ...healthRoutes(deps.db, deps.lifecycle, deps.replicas),
    ...apiReferenceRoutes(deps.openapiYaml),
    ...integrationsPageRoutes(deps.frameAncestors ?? []),
    ...(deps.portal ? portalRoutes(deps.portal) : []),
  ];
}

/**
 * The public listener: the v1 REST API, the calendar feed, the OpenAPI document and reference
 * page, health, the integrations page's endpoints. Express is the framework (requests, answers, `trust proxy`, files); its one
 * layer is the dispatcher, which runs each request's declared route (rest/pipeline/dispatch.ts).
 */
export function createPublicApp(deps: PublicAppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', deps.trustProxy ?? false);
  app.use(
    dispatch({
      routes: publicRoutes(deps),
      finish: requestLog(deps.logger, deps.metrics.requestCounts, deps.redactor, deps.keyActivity ?? null),
      redactor: deps.redactor,
      logger: deps.logger,
      lifecycle: deps.lifecycle,
    }),
  );
  return app;
}
