import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { ApiError, isApiError, toApiError } from '../errors.ts';
import { GRAPHQL_RESPONSE_CONTENT_TYPE, JSON_CONTENT_TYPE, errorAnswer } from '../http-answers.ts';
import type { Logger } from '../logger.ts';
import type { AuditRecord } from './audit-trail.ts';

/** What body-parser's errors mean to the client, by their `type`. */
const BODY_ERRORS: Record<string, string> = {
  'entity.parse.failed': 'The request body is not valid JSON.',
  'charset.unsupported': 'The request body must be JSON in UTF-8.',
  'encoding.unsupported': 'The request body has a content encoding this endpoint does not accept (gzip, deflate and br are accepted).',
  'request.size.invalid': 'The request body does not have the length its Content-Length gives.',
  'request.aborted': 'The request body was not sent whole.',
};

/**
 * A client's mistake found before GraphQL sees the request (a body that is not JSON, too large,
 * in another charset) as an error of the catalogue; anything else is unexpected.
 */
function toListenerError(error: unknown, maxBodyText: string): ApiError {
  if (isApiError(error)) return error;
  const { status, type } = (error ?? {}) as { status?: unknown; type?: unknown };
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new ApiError('payload_too_large', `The request body is larger than the ${maxBodyText} this endpoint accepts.`);
    if (status === 404) return new ApiError('not_found');
    return new ApiError('invalid_request', (typeof type === 'string' && BODY_ERRORS[type]) || 'The request could not be understood.');
  }
  return toApiError(error);
}

/**
 * The media type of a GraphQL answer to `req`, chosen from its `Accept` as Apollo Server chooses
 * its own (GraphQL over HTTP): `application/graphql-response+json` when the client prefers it,
 * `application/json` otherwise, and when it accepts neither. Express's `req.accepts` negotiates
 * with the same library (negotiator) as Apollo Server.
 */
export function graphqlContentType(req: Request): string {
  return req.accepts(['application/json', 'application/graphql-response+json']) === 'application/graphql-response+json' ? GRAPHQL_RESPONSE_CONTENT_TYPE : JSON_CONTENT_TYPE;
}

/**
 * Sends an error in the shape of where it happened: GraphQL's `errors` on /graphql, the REST
 * error shape elsewhere (as /metrics answers). The connection closes: a body may be left unread.
 */
export function sendListenerError(res: Response, error: ApiError, graphql: boolean): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const answer = graphql ? errorAnswer(error, 'graphql', graphqlContentType(res.req)) : errorAnswer(error);
  res.status(answer.status).set(answer.headers).set('Connection', 'close').send(answer.body);
}

/** Every path the internal listener does not serve: a JSON 404, never Express's HTML page. */
export const notFound: RequestHandler = (_req, _res, next) => next(new ApiError('not_found'));

/**
 * The internal listener's last handler: every error leaves as JSON from the catalogue, whatever
 * NODE_ENV is (Express's own handler writes an HTML page with the stack); unexpected ones are
 * logged once, with their cause, in the JSON log.
 */
export function answerErrors(logger: Logger, maxBodyText: string): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const apiError = toListenerError(error, maxBodyText);
    if (apiError.status >= 500) logger.error({ err: error, method: req.method, route: req.baseUrl || 'unmatched', code: apiError.code }, 'internal listener request failed');
    // Only requests to /graphql carry an audit record.
    const audit = (res.locals as { audit?: AuditRecord }).audit;
    if (audit) audit.errorCodes = [apiError.code];
    sendListenerError(res, apiError, audit !== undefined);
  };
}
