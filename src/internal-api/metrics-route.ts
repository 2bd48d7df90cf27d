import { Router } from 'express';
import { hasBearerToken } from '../auth/bearer-token.ts';
import { ApiError } from '../errors.ts';
import type { Metrics } from '../observability/metrics.ts';

/**
 * `GET /metrics` for Prometheus. The metrics token (METRICS_TOKEN) lets a scraper read metrics
 * without the internal token's access to every workspace's data; the internal token opens it too.
 */
export function metricsRouter(metrics: Metrics, tokens: ReadonlyArray<string | undefined>): Router {
  const router = Router();
  router.get('/metrics', async (req, res, next) => {
    if (!hasBearerToken(req.get('authorization'), tokens)) {
      return next(new ApiError('invalid_api_key', 'A valid metrics token or internal API token is required.', { headers: { 'WWW-Authenticate': 'Bearer' } }));
    }
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  return router;
}
