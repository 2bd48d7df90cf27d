/**
 * Wakes the job queue when a scheduled attempt falls due. The queue finds jobs that become due
 * only when it polls (every WEBHOOK_POLL_INTERVAL_MS, 2 s by default on PostgreSQL); a timer set
 * for each known due time lets the attempt start on time instead. Due times within a few
 * milliseconds of each other share one wake-up.
 */
export class DueTimer {
  readonly #wake: () => void;
  /** Due times (ms since epoch, this process's clock), ascending. */
  #due: number[] = [];
  #timer: NodeJS.Timeout | null = null;
  #armedFor = Infinity;
  #stopped = false;

  constructor(wake: () => void) {
    this.#wake = wake;
  }

  /**
   * Wake the queue `inMs` from now. The delay comes from the database's clock (time until the
   * job's `run_at`), so that a clock difference between the two machines does not matter; a few
   * milliseconds are added so that the job is due by then.
   */
  in(inMs: number): void {
    if (this.#stopped || !Number.isFinite(inMs)) return;
    const at = Date.now() + Math.max(0, inMs) + 5;
    if (this.#due.some((time) => Math.abs(time - at) < 5)) return;
    this.#due.push(at);
    this.#due.sort((a, b) => a - b);
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#due = [];
  }

  #arm(): void {
    const next = this.#due[0];
    if (next === undefined || next >= this.#armedFor) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#armedFor = next;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, next - Date.now()));
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = null;
    this.#armedFor = Infinity;
    const now = Date.now();
    const due = this.#due.filter((time) => time <= now + 1).length;
    this.#due.splice(0, due);
    if (due > 0 && !this.#stopped) this.#wake();
    this.#arm();
  }
}
