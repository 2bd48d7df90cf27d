import { setMaxListeners } from 'node:events';
import type { Logger } from '../logger.ts';
import type { ClaimedDelivery } from './claim-store.ts';

export interface DispatcherOptions {
  /** Leases up to `limit` due deliveries (the bounds and the fair order are the claim's). */
  claim: (limit: number) => Promise<ClaimedDelivery[]>;
  /** Makes and records the attempt of a claimed delivery; may call `answered` when its place can go to another before it is recorded. */
  attempt: (delivery: ClaimedDelivery, signal: AbortSignal, answered: () => void) => Promise<void>;
  /** Attempts in flight at once in this process (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** How often an idle dispatcher looks for due deliveries nobody announced (a killed worker's expired leases). */
  pollIntervalMs: number;
  logger: Logger;
}

/**
 * docs/architecture.md, "Webhook isolation": runs the scheduled attempts of one worker process.
 * Whenever places are free it claims that many due deliveries in one statement and starts their
 * attempts at once; each attempt that ends (or whose success is being recorded: at most as many
 * again wait for that) frees its place and asks for another claim. Claims
 * asked for while one runs are made once, after it: under load a claim fetches many deliveries,
 * and a claim that finds nothing is not repeated until something changes (an attempt ends, a
 * wake-up, the idle poll). An attempt that hangs holds only its own place.
 */
export class Dispatcher {
  readonly #options: DispatcherOptions;
  readonly #abort = new AbortController();
  readonly #running = new Set<Promise<void>>();
  /** Attempts claimed whose receiver has not answered yet: the places in use. */
  #unanswered = 0;
  #claiming: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  readonly #poller: NodeJS.Timeout;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    // Every attempt in flight listens to the one shutdown signal.
    setMaxListeners(2 * options.concurrency + 10, this.#abort.signal);
    this.#poller = setInterval(() => this.nudge(), options.pollIntervalMs);
    this.#poller.unref();
  }

  /** Something may have become due: claim what the free places allow. */
  nudge(): void {
    if (this.#stopped) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = this.#claimWhileFree().finally(() => (this.#claiming = null));
  }

  async #claimWhileFree(): Promise<void> {
    do {
      this.#again = false;
      const free = Math.min(this.#options.concurrency - this.#unanswered, 2 * this.#options.concurrency - this.#running.size);
      if (free <= 0 || this.#stopped) return;
      let claimed: ClaimedDelivery[];
      try {
        claimed = await this.#options.claim(free);
      } catch (error) {
        // The database is away: the idle poll tries again.
        this.#options.logger.warn({ err: error }, 'webhook claim failed');
        return;
      }
      for (const delivery of claimed) this.#start(delivery);
      // A full batch may have left more behind.
      if (claimed.length === free) this.#again = true;
    } while (this.#again);
  }

  #start(delivery: ClaimedDelivery): void {
    this.#unanswered += 1;
    let answered = false;
    const answer = () => {
      if (answered) return;
      answered = true;
      this.#unanswered -= 1;
      this.nudge();
    };
    const running: Promise<void> = this.#options
      .attempt(delivery, this.#abort.signal, answer)
      .catch((error: unknown) => {
        if (!this.#abort.signal.aborted) this.#options.logger.warn({ err: error, deliveryId: delivery.id }, 'webhook attempt failed');
      })
      .finally(() => {
        this.#running.delete(running);
        answer();
        this.nudge();
      });
    this.#running.add(running);
  }

  /**
   * Claims nothing more; attempts in flight get `graceMs` to end, then are cut short (their leases
   * given back, nothing recorded: they are attempted again, by this worker or another).
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#poller);
    await this.#claiming;
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.#running), new Promise((resolve) => (grace = setTimeout(resolve, graceMs)))]);
    clearTimeout(grace);
    this.#abort.abort();
    await Promise.all(this.#running);
  }
}
