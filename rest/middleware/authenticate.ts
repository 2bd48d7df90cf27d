import type { RequestHandler } from 'express';
import type { ActiveApiKey, Authenticator } from '../../src/auth/authenticator.ts';
import { ApiError, isApiError } from '../../src/errors.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';

export interface AuthenticatedLocals {
  apiKey: ActiveApiKey;
}

/** Counts the Authorization headers as sent: Node keeps only the first of repeated ones. */
function authorizationHeader(rawHeaders: readonly string[]): string | string[] | undefined {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'authorization') values.push(rawHeaders[i + 1]!);
  }
  if (values.length === 0) return undefined;
  return values.length === 1 ? values[0] : values;
}

/**
 * 401 for anything but one valid, active key. Failed attempts are limited per client address,
 * separately from the per-key limit (contract part 8).
 */
export function authenticate(authenticator: Authenticator, limiters: RateLimiters): RequestHandler {
  return async (req, res, next) => {
    try {
      res.locals.apiKey = await authenticator.authenticate(authorizationHeader(req.rawHeaders));
      next();
    } catch (error) {
      if (!isApiError(error) || error.code !== 'invalid_api_key') return next(error);
      const decision = await limiters.consumeAuthFailure(req.ip ?? 'unknown');
      if (!decision.allowed) {
        res.locals.limiter = 'authentication';
        return next(
          new ApiError('rate_limit_exceeded', 'Too many failed authentications from this address; wait for the time given in Retry-After.', {
            headers: { 'Retry-After': String(Math.max(1, decision.resetSeconds)) },
          }),
        );
      }
      next(error);
    }
  };
}
