import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { redactPath, type Logger } from '../../src/logger.ts';
import type { Metrics } from '../../src/observability/metrics.ts';

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * One structured line per request: id, method, route, status, duration and the key id (never
 * the key; the calendar path's token is redacted). The request id is echoed in `X-Request-Id`.
 */
export function requestLog(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const incoming = req.get('x-request-id');
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
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
      logger.info(
        {
          requestId,
          method: req.method,
          path: redactPath(req.originalUrl),
          route,
          status: res.statusCode,
          durationMs: Math.round(durationMs * 100) / 100,
          keyId: apiKey?.id ?? null,
        },
        'request',
      );
    });
    next();
  };
}
