import type { RequestHandler } from 'express';
import { ApiError } from '../../src/errors.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import type { AuthenticatedLocals } from './authenticate.ts';

/**
 * Every request of a valid key counts, whatever its status, and every answer to it carries the
 * IETF RateLimit headers; the 121st request in the window gets 429 with `Retry-After: <window>`.
 */
export function rateLimitPerKey(limiters: RateLimiters): RequestHandler {
  const policy = `"default";q=${limiters.max};w=${limiters.windowSeconds}`;
  return async (_req, res, next) => {
    const { apiKey } = res.locals as AuthenticatedLocals;
    const decision = await limiters.consumeKey(apiKey.id);
    res.set('RateLimit-Policy', policy);
    res.set('RateLimit', `"default";r=${decision.remaining};t=${decision.resetSeconds}`);
    if (!decision.allowed) {
      return next(
        new ApiError('rate_limit_exceeded', undefined, { headers: { 'Retry-After': String(limiters.windowSeconds) } }),
      );
    }
    next();
  };
}
