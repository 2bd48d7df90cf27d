/** What a limit decided about one request. */
export interface RateLimitDecision {
  allowed: boolean;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

interface Window {
  /** Requests counted in the window, the refused ones included. */
  count: number;
  /** When the window ends, in ms since the epoch. */
  endsAt: number;
}

/**
 * Fixed windows per key in this process's memory, counted the way rate-limiter-flexible's memory
 * store counts them (a key's window starts with its first request and lasts `windowSeconds`; every
 * request counts, the refused ones too), for the request path of `RATE_LIMIT_STORE=memory`: a
 * request of a key already seen in its window changes two numbers in place and allocates nothing.
 * Windows that have ended are swept once per window length.
 */
export class MemoryWindows {
  readonly #points: number;
  readonly #windowMs: number;
  readonly #windows = new Map<string, Window>();
  #sweepAt = 0;

  constructor(points: number, windowSeconds: number) {
    this.#points = points;
    this.#windowMs = windowSeconds * 1000;
  }

  /** Counts one request of `key` and writes the decision into `into` (allowed, remaining, seconds to the reset). */
  consume(key: string, into: RateLimitDecision, now = Date.now()): RateLimitDecision {
    if (now >= this.#sweepAt) this.#sweep(now);
    let window = this.#windows.get(key);
    if (window === undefined || window.endsAt <= now) {
      window = { count: 0, endsAt: now + this.#windowMs };
      this.#windows.set(key, window);
    }
    window.count += 1;
    into.allowed = window.count <= this.#points;
    into.remaining = window.count >= this.#points ? 0 : this.#points - window.count;
    into.resetSeconds = Math.ceil((window.endsAt - now) / 1000);
    return into;
  }

  #sweep(now: number): void {
    this.#sweepAt = now + this.#windowMs;
    for (const [key, window] of this.#windows) if (window.endsAt <= now) this.#windows.delete(key);
  }
}
