import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Logger, Redactor } from '../../src/logger.ts';
import type { Metrics } from '../../src/observability/metrics.ts';

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * One structured line per request: id, method, the matched route (or `unmatched`), the decoded
 * path and query with every secret redacted, status, duration, the key id (never the key) and how
 * the response cache answered. The request id is echoed in `X-Request-Id`; one that holds a secret
 * is replaced. Called by the public app's first layer for every request.
 */
export function requestLog(logger: Logger, metrics: Metrics, redactor: Redactor): (req: Request, res: Response) => void {
  return (req, res) => {
    const started = process.hrtime.bigint();
    const incoming = req.get('x-request-id');
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) && !redactor.holdsSecret(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.set('X-Request-Id', requestId);
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const apiKey = res.locals.apiKey as { id: string } | undefined;
      const route = (res.locals.route as string | undefined) ?? 'unmatched';
      const labels = { route, method: req.method, status: String(res.statusCode) };
      metrics.requests.inc(labels);
      metrics.requestDuration.observe(labels, durationMs / 1000);
      if (res.statusCode === 401) metrics.authenticationFailures.inc();
      if (res.statusCode === 429) metrics.rateLimitRejections.inc({ limiter: (res.locals.limiter as string | undefined) ?? 'key' });
      const { path, query } = redactor.url(req.originalUrl);
      logger.info(
        {
          requestId,
          method: req.method,
          path,
          query,
          route,
          status: res.statusCode,
          durationMs: Math.round(durationMs * 100) / 100,
          keyId: apiKey?.id ?? null,
          // hit, miss, shared, bypass or off (src/graphql/response-cache.ts); null where no answer was built or sent.
          cache: (res.locals.cache as string | undefined) ?? null,
        },
        'request',
      );
    });
  };
}
