/** The longest delay a Node timer takes (a longer one fires at once). */
const MAX_DELAY_MS = 2 ** 31 - 1;
/** Added to each delay, so that what the timer wakes for is due by then. */
const MARGIN_MS = 5;

/**
 * docs/architecture.md, "Webhook isolation": one timer, armed for the earliest due time the
 * dispatcher knows of. A later time asked for while an earlier one is armed is not kept: the
 * wake-up claims, and the claim round reads the next due time from the deliveries again, which
 * holds every later one.
 */
export class DueTimer {
  readonly #wake: () => void;
  #timer: NodeJS.Timeout | null = null;
  /** When the armed timer fires (ms since epoch, this process's clock); Infinity when none is. */
  #armedFor = Infinity;
  #stopped = false;

  constructor(wake: () => void) {
    this.#wake = wake;
  }

  /**
   * Wake `inMs` from now, unless the timer is armed for earlier. The delay comes from the
   * database's clock (time until the delivery's due time), so that a clock difference between the
   * two machines does not matter.
   */
  in(inMs: number): void {
    if (this.#stopped || Number.isNaN(inMs)) return;
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, inMs) + MARGIN_MS);
    const at = Date.now() + delay;
    if (at >= this.#armedFor) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#armedFor = at;
    this.#timer = setTimeout(() => this.#fire(), delay);
    this.#timer.unref();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#armedFor = Infinity;
  }

  #fire(): void {
    this.#timer = null;
    this.#armedFor = Infinity;
    if (!this.#stopped) this.#wake();
  }
}
