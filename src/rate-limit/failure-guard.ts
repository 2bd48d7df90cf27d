import { ApiError } from '../errors.ts';
import type { FailureLimiter, RateLimitDecision } from './limiters.ts';

export function tooManyFailures(decision: RateLimitDecision): ApiError {
  return new ApiError('rate_limit_exceeded', 'Too many failed authentications from this address; wait for the time given in Retry-After.', {
    headers: { 'Retry-After': String(Math.max(1, decision.resetSeconds)) },
  });
}

/**
 * The per-address limit of failed authentications (docs/contract-rules.md, limits.auth-failures):
 * every failure counts against its client address, and past the limit the address gets 429
 * instead of the failure's own answer. Only failures count: a valid credential is served from any
 * address with its own budget, whatever else that address sent.
 */
export class FailureGuard {
  readonly #failures: FailureLimiter;

  constructor(failures: FailureLimiter) {
    this.#failures = failures;
  }

  /** Counts a failed authentication of `address`: the answer is `failure`, or 429 past the limit. */
  async refuse(address: string, failure: ApiError): Promise<ApiError> {
    const counted = await this.#failures.failed(address);
    return counted.allowed ? failure : tooManyFailures(counted);
  }
}
