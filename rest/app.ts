import express, { type ErrorRequestHandler, type Express } from 'express';
import { ApiError, isApiError, toApiError } from '../src/errors.ts';
import type { Logger } from '../src/logger.ts';
import type { IssuedCredentials } from '../src/auth/issued-credentials.ts';
import type { FailureGuard } from '../src/rate-limit/failure-guard.ts';
import { requestLog } from './middleware/request-log.ts';
import type { Metrics } from '../src/observability/metrics.ts';
import { closeIfBodySent } from './middleware/close-with-body.ts';
import { apiReferenceRouter } from './routes/api-reference.ts';
import { healthRouter } from './routes/health.ts';
import type { ReplicaSet } from '../src/db/replicas.ts';
import { setSecurityHeaders } from './middleware/security-headers.ts';
import { calendarFeedRouter } from './routes/calendar-feed.ts';
import { publicV1Routes, type PublicV1Dependencies } from './routes/public-v1.ts';
import { sendError } from './send-error.ts';
import { nameServerRoute } from '../src/observability/route-name.ts';

export interface PublicAppDependencies extends PublicV1Dependencies {
  openapiYaml: string;
  metrics: Metrics;
  lifecycle: { draining: boolean };
  /** The per-address failure limit of credentials (API keys, feed tokens). */
  guard: FailureGuard;
  /** Which API keys and feed tokens are worth a lookup. */
  issued: IssuedCredentials;
  logger: Logger;
  /** Streaming replicas (DATABASE_REPLICA_URL): /readyz reports each one's state. */
  replicas?: Pick<ReplicaSet, 'statuses'> | undefined;
  /** Express's `trust proxy`: false, a hop count, or the trusted proxies' addresses and ranges. */
  trustProxy?: false | number | string[];
}

/** Client errors raised by Express itself (a malformed URL, say) keep their 4xx meaning. */
function fromHttpError(error: unknown): ApiError | null {
  const status = (error as { status?: unknown; statusCode?: unknown } | null)?.status ?? (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  if (status === 404) return new ApiError('not_found');
  return new ApiError('invalid_request', 'The request could not be understood.');
}

/** The public listener: the v1 REST API, its OpenAPI document and reference page, health. */
export function createPublicApp(deps: PublicAppDependencies): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('case sensitive routing', true);
  app.set('trust proxy', deps.trustProxy ?? false);
  const logRequest = requestLog(deps.logger, deps.metrics, deps.redactor);
  const publicV1 = publicV1Routes(deps);
  // One layer for what every request gets (its log line, the headers every answer carries) and
  // for the list routes at their exact paths: each layer of the router costs every request.
  app.use((req, res, next) => {
    logRequest(req, res);
    setSecurityHeaders(res);
    closeIfBodySent(req, res);
    // While draining, every answer ends its connection so that clients reconnect elsewhere.
    if (deps.lifecycle.draining) res.setHeader('Connection', 'close');
    const listRoute = publicV1.byPath.get(req.url);
    if (!listRoute) {
      next();
      return;
    }
    nameServerRoute(req.method, req.url);
    listRoute(req, res).catch(next);
  });
  // The API's own paths first, so that their requests pass no other router; the paths of the
  // routers below never overlap them.
  app.use('/api/public/v1', publicV1.router);
  app.use('/api/calendar/v1', calendarFeedRouter(deps));
  app.use(healthRouter(deps.db, deps.lifecycle, deps.replicas));

  app.get('/openapi/public-v1.yaml', (_req, res) => {
    res.locals.route = '/openapi/public-v1.yaml';
    res.type('application/yaml; charset=utf-8');
    res.send(deps.openapiYaml);
  });
  app.use(apiReferenceRouter());

  app.use((_req, _res, next) => next(new ApiError('not_found')));

  const handleError: ErrorRequestHandler = (error: unknown, req, res, _next) => {
    const apiError = isApiError(error) ? error : (fromHttpError(error) ?? toApiError(error));
    if (apiError.status >= 500) {
      deps.logger.error(
        { err: apiError.cause ?? error, requestId: res.locals.requestId, method: req.method, ...deps.redactor.url(req.originalUrl), code: apiError.code },
        'request failed',
      );
    }
    sendError(res, apiError);
  };
  app.use(handleError);
  return app;
}
