import type { Response } from 'express';
import { ApiError } from '../../src/errors.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import type { ActiveApiKey } from '../../src/auth/authenticator.ts';

/**
 * Every request of a valid key counts, whatever its status, and every answer to it carries the
 * IETF RateLimit headers; the 121st request in the window gets 429 with `Retry-After: <window>`.
 */
export function keyRateLimit(limiters: RateLimiters): (res: Response, apiKey: ActiveApiKey) => Promise<void> {
  const policy = `"default";q=${limiters.max};w=${limiters.windowSeconds}`;
  return async (res, apiKey) => {
    const decision = await limiters.consumeKey(apiKey.id);
    res.set('RateLimit-Policy', policy);
    res.set('RateLimit', `"default";r=${decision.remaining};t=${decision.resetSeconds}`);
    if (!decision.allowed) {
      throw new ApiError('rate_limit_exceeded', undefined, { headers: { 'Retry-After': String(limiters.windowSeconds) } });
    }
  };
}
