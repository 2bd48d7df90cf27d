import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { ApiError, isApiError, toApiError } from '../../src/errors.ts';
import { SECURITY_HEADERS } from '../../src/http-answers.ts';
import type { Logger, Redactor } from '../../src/logger.ts';
import { nameServerRoute } from '../../src/observability/route-name.ts';
import { sendError } from './answers.ts';
import type { FinishRequest } from './request-log.ts';
import { RequestState } from './request-state.ts';
import { routeTable, type Match, type Route } from './route-table.ts';

export interface DispatchOptions {
  routes: readonly Route[];
  finish: FinishRequest;
  redactor: Redactor;
  logger: Logger;
  lifecycle: { draining: boolean };
}

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;
const SECURITY = Object.entries(SECURITY_HEADERS).flat();

/** Client errors raised by Express itself keep their 4xx meaning. */
function fromHttpError(error: unknown): ApiError | null {
  const status = (error as { status?: unknown; statusCode?: unknown } | null)?.status ?? (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  if (status === 404) return new ApiError('not_found');
  return new ApiError('invalid_request', 'The request could not be understood.');
}

/**
 * The public app's one layer: it finds the request's route among the declared ones, makes its
 * state (request id, the headers every answer carries) and runs the route's steps; a request no
 * route takes gets 404. Whatever a step throws ends the request in the contract's error shape.
 * Once the answer is handed to Node, its log line and metrics are written from the state.
 */
export function dispatch(options: DispatchOptions): RequestHandler {
  const resolve = routeTable(options.routes);
  const { finish, redactor, logger, lifecycle } = options;
  const fail = (state: RequestState, error: unknown) => {
    const apiError = isApiError(error) ? error : (fromHttpError(error) ?? toApiError(error));
    if (apiError.status >= 500) {
      logger.error({ err: apiError.cause ?? error, requestId: state.requestId, method: state.req.method, ...redactor.url(state.req.originalUrl), code: apiError.code }, 'request failed');
    }
    state.errorCode = apiError.code;
    sendError(state, apiError);
    finish(state);
  };
  const requestIdOf = (req: Request) => {
    const incoming = req.headers['x-request-id'];
    return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) && !redactor.holdsSecret(incoming) ? incoming : randomUUID();
  };
  return (req: Request, res: Response) => {
    const requestId = requestIdOf(req);
    const headers = ['X-Request-Id', requestId, ...SECURITY];
    let match: Match | null = null;
    let refused: unknown = null;
    try {
      match = resolve(req.method, req.url);
    } catch (error) {
      refused = error;
    }
    // Request bodies are never read but by the routes that declare it (docs/contract-rules.md,
    // http.no-body): rather than drain whatever a client sends, the connection of a request that
    // carries one closes after its answer. While draining, every answer ends its connection so
    // that clients reconnect elsewhere.
    const unreadBody = match?.route.readsBody !== true && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);
    if (lifecycle.draining || unreadBody) headers.push('Connection', 'close');
    const state = new RequestState(req, res, match?.route.name ?? 'unmatched', match?.param ?? '', match?.hasQuery ?? false, requestId, headers);
    if (match?.route.errorShape === 'graphql') state.errorShape = 'graphql';
    if (refused !== null) return fail(state, refused);
    if (match === null) return fail(state, new ApiError('not_found'));
    nameServerRoute(req.method, state.route);
    try {
      const pending = match.run(state);
      if (pending === undefined) finish(state);
      else pending.then(() => finish(state), (error: unknown) => fail(state, error));
    } catch (error) {
      fail(state, error);
    }
  };
}
