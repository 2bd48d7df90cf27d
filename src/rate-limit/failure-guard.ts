import type { FailureLimiter, RateLimitDecision } from './limiters.ts';

/** What a guarded lookup found: the value, an unknown credential, or an address over its limit. */
export type GuardedLookup<T> = { found: T } | { found: null; limited: RateLimitDecision | null };

/** How long, and for how many credentials, a credential that was found valid skips the address check. */
const REMEMBER_VALID_MS = 3_600_000;
const MAX_REMEMBERED = 10_000;

/**
 * Looks credentials (API keys, feed tokens) up under the per-address failure limit
 * (docs/contract-rules.md, `limits.auth-failures`): an address over its limit is refused before
 * the lookup, so guessing costs it no database work at all.
 *
 * A credential this process found valid within the last hour is looked up even from an address
 * over its limit: a client that shares its address with someone guessing keys (one NAT, one proxy)
 * keeps working. Only the hash of such a credential is kept, and for a bounded number of them.
 */
export class FailureGuard {
  readonly #failures: FailureLimiter;
  readonly #valid = new Map<string, number>();
  readonly #inFlight = new Map<string, Promise<unknown>>();

  constructor(failures: FailureLimiter) {
    this.#failures = failures;
  }

  /**
   * `hash` identifies the credential (`null` when it is missing or malformed: that fails without a
   * lookup); `find` looks it up and resolves to null when it is unknown.
   */
  async lookup<T>(address: string, hash: string | null, find: () => Promise<T | null>): Promise<GuardedLookup<T>> {
    if (hash === null) return this.#lookupOnce(address, null, find);
    // Concurrent requests of one address with the same credential (a client's burst with a key it
    // just got) share one attempt and one lookup: the burst does not use up the address's budget.
    const key = `${address} ${hash}`;
    const inFlight = this.#inFlight.get(key) as Promise<GuardedLookup<T>> | undefined;
    if (inFlight) {
      const shared = await inFlight;
      if (shared.found !== null || ('limited' in shared && shared.limited)) return shared;
      return this.#fail(address);
    }
    const owner = this.#lookupOnce(address, hash, find).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, owner);
    return owner;
  }

  async #lookupOnce<T>(address: string, hash: string | null, find: () => Promise<T | null>): Promise<GuardedLookup<T>> {
    const trusted = hash !== null && this.#isValid(hash);
    if (!trusted) {
      const attempt = await this.#failures.attempt(address);
      if (!attempt.allowed) return { found: null, limited: attempt };
    }
    let found: T | null = null;
    if (hash !== null) {
      try {
        found = await find();
      } catch (error) {
        // The lookup failed (the database is unreachable): that was no failed authentication.
        if (!trusted) await this.#failures.succeeded(address);
        throw error;
      }
    }
    if (found !== null) {
      this.#remember(hash!);
      if (!trusted) await this.#failures.succeeded(address);
      return { found };
    }
    if (trusted) {
      this.#valid.delete(hash);
      return this.#fail(address);
    }
    return this.#counted(await this.#failures.failed(address));
  }

  /** A failure not yet counted against the address. */
  async #fail(address: string): Promise<GuardedLookup<never>> {
    const attempt = await this.#failures.attempt(address);
    if (!attempt.allowed) return { found: null, limited: attempt };
    return this.#counted(await this.#failures.failed(address));
  }

  #counted(failed: RateLimitDecision): GuardedLookup<never> {
    return { found: null, limited: failed.allowed ? null : failed };
  }

  #isValid(hash: string): boolean {
    const until = this.#valid.get(hash);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.#valid.delete(hash);
    return false;
  }

  #remember(hash: string): void {
    this.#valid.delete(hash);
    if (this.#valid.size >= MAX_REMEMBERED) this.#valid.delete(this.#valid.keys().next().value!);
    this.#valid.set(hash, Date.now() + REMEMBER_VALID_MS);
  }
}
