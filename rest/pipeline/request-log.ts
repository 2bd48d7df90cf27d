import type { KeyActivity } from '../../src/auth/key-activity.ts';
import { infoLines, type Logger, type Redactor } from '../../src/logger.ts';
import type { RequestCounts } from '../../src/observability/metrics.ts';
import type { RequestState } from './request-state.ts';

/** What a request's log line and metrics are written from, once its answer has been handed to Node. */
export type FinishRequest = (state: RequestState) => void;

/**
 * One structured line per request: id, method, the decoded path and query with every secret
 * redacted, the route (or `unmatched`), status, duration, the key id (never the key) and how the
 * answer cache answered (`hit`, `miss`, `shared`, `bypass` or `off`; null where no answer was built
 * or sent); the request's metrics; and, for a request with a valid key, its entry in the key's
 * activity (last use, request log, daily counts), collected in memory and written in batches.
 * Read from the request's state alone.
 *
 * The line is built from parts serialised in advance: a route's own path (what most requests ask
 * for) and its name once per route, a key's id once per key object; only what differs per
 * request is serialised per request. Nothing in it can hold a secret: the path and query pass
 * the redactor, the request id was checked for one, ids and names are the service's own.
 */
export function requestLog(logger: Logger, counts: RequestCounts, redactor: Redactor, activity: Pick<KeyActivity, 'record'> | null = null): FinishRequest {
  const write = infoLines(logger, 'request');
  const routeParts = new Map<string, { exactPath: string; route: string }>();
  const partsOf = (route: string) => {
    let parts = routeParts.get(route);
    if (parts === undefined) {
      parts = { exactPath: `"path":${JSON.stringify(route)},"query":null`, route: `"route":${JSON.stringify(route)}` };
      routeParts.set(route, parts);
    }
    return parts;
  };
  const keyIds = new WeakMap<object, string>();
  const keyIdOf = (state: RequestState) => {
    const key = state.apiKey;
    if (key === null) return 'null';
    let id = keyIds.get(key);
    if (id === undefined) {
      id = JSON.stringify(key.id);
      keyIds.set(key, id);
    }
    return id;
  };
  return (state) => {
    const { req, res } = state;
    const status = res.statusCode;
    const durationMs = performance.now() - state.startedAt;
    counts.request(state.route, req.method, status).observe(durationMs / 1000);
    if (status === 401) counts.authenticationFailures.count += 1;
    else if (status === 429) counts.rateLimitRejections(state.limiter ?? 'key').count += 1;
    if (state.answer !== null && state.cache !== null) counts.cacheAnswers(state.answer, state.cache).count += 1;
    if (activity !== null && state.apiKey !== null) activity.record(state.apiKey, state, status, durationMs);
    if (write === null) return;
    const parts = partsOf(state.route);
    const url = req.originalUrl;
    let where: string;
    if (url === state.route) {
      where = parts.exactPath;
    } else {
      const { path, query } = redactor.url(url);
      where = `"path":${JSON.stringify(path)},"query":${query === null ? 'null' : JSON.stringify(query)}`;
    }
    write(
      `"requestId":"${state.requestId}","method":"${req.method}",${where},${parts.route},"status":${status},` +
        `"durationMs":${Math.round(durationMs * 100) / 100},"keyId":${keyIdOf(state)},"cache":${state.cache === null ? 'null' : `"${state.cache}"`}`,
    );
  };
}
