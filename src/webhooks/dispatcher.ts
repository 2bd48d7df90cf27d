import { setMaxListeners } from 'node:events';
import type { Logger } from '../logger.ts';
import type { ClaimedDelivery } from './claim-store.ts';

export interface DispatcherOptions {
  /** Leases up to `limit` due deliveries (the bounds and the fair order are the claim's). */
  claim: (limit: number) => Promise<ClaimedDelivery[]>;
  /**
   * Makes and records the attempt of a claimed delivery: `turn.send()` waits for one of the
   * places to send (and gives back the function that frees it); `turn.answered()` says that the
   * attempt's place can go to another while it is recorded.
   */
  attempt: (delivery: ClaimedDelivery, signal: AbortSignal, turn: Turn) => Promise<void>;
  /** Requests in flight at once in this process (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** How often an idle dispatcher looks for due deliveries nobody announced (a killed worker's expired leases). */
  pollIntervalMs: number;
  logger: Logger;
}

/** Attempts claimed and not answered yet (sending or prepared), per place to send in. */
const UNANSWERED = 4;
/** Attempts answered and being recorded, per place to send in. */
const RECORDING = 2;

export interface Turn {
  send(): Promise<() => void>;
  answered(): void;
}

/**
 * docs/architecture.md, "Webhook isolation": runs the scheduled attempts of one worker process.
 * Whenever places are free it claims that many due deliveries in one statement and starts their
 * attempts at once. At most `concurrency` requests are sent at once; up to three times as many
 * attempts are prepared meanwhile (claimed, their bodies built and stored), so that a request
 * starts as soon as another ends even while the database takes a claim's and a body's round trips
 * (with as many as `concurrency` prepared, requests waited on them), and up to twice as many again
 * may wait for their outcome to be recorded (a success frees its place while it is). What each
 * endpoint and workspace has in flight is bounded by the claim, not here: a deeper queue holds no
 * more of any endpoint's places. Each attempt that frees its place asks for another claim. Claims
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
  /** Requests being sent, and the attempts waiting to send one. */
  #sending = 0;
  readonly #waiting: Array<() => void> = [];
  #claiming: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  readonly #poller: NodeJS.Timeout;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    // Every attempt in flight listens to the one shutdown signal.
    setMaxListeners((UNANSWERED + RECORDING + 1) * options.concurrency + 10, this.#abort.signal);
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
      const { concurrency } = this.#options;
      const free = Math.min(UNANSWERED * concurrency - this.#unanswered, (UNANSWERED + RECORDING) * concurrency - this.#running.size);
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
      .attempt(delivery, this.#abort.signal, { send: () => this.#sendTurn(), answered: answer })
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

  async #sendTurn(): Promise<() => void> {
    if (this.#sending >= this.#options.concurrency) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#sending += 1;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      // The place passes to the next waiting attempt as it is, or is given back.
      const next = this.#waiting.shift();
      if (next) next();
      else this.#sending -= 1;
    };
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
