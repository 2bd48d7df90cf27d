import { ApiError } from '../../src/errors.ts';
import type { RateLimitDecision, RateLimiters } from '../../src/rate-limit/limiters.ts';
import type { Step } from '../pipeline/compose.ts';
import type { RequestState } from '../pipeline/request-state.ts';

/**
 * Every request of a valid key counts, whatever its status, and every answer to it carries the
 * IETF RateLimit headers; the 121st request in the window gets 429 with `Retry-After: <window>`
 * (docs/contract-rules.md, limits.per-key and limits.headers). Runs after authentication. With the
 * limits in this process's memory the count is decided at once, in place; a shared store is awaited.
 */
export function keyRateLimit(limiters: RateLimiters): Step {
  const policy = `"default";q=${limiters.max};w=${limiters.windowSeconds}`;
  const tooMany = { headers: { 'Retry-After': String(limiters.windowSeconds) } };
  const apply = (state: RequestState, decision: RateLimitDecision) => {
    state.headers.push('RateLimit-Policy', policy, 'RateLimit', `"default";r=${decision.remaining};t=${decision.resetSeconds}`);
    if (!decision.allowed) {
      state.limiter = 'key';
      throw new ApiError('rate_limit_exceeded', undefined, tooMany);
    }
  };
  // One decision object serves every request: it is read before the next request is counted.
  const decision: RateLimitDecision = { allowed: false, remaining: 0, resetSeconds: 0 };
  return (state) => {
    const keyId = state.key.id;
    const now = limiters.consumeKeyNow(keyId, decision);
    if (now) return apply(state, now);
    return limiters.consumeKey(keyId).then((counted) => apply(state, counted));
  };
}
