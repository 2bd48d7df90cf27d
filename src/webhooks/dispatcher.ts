import { setMaxListeners } from 'node:events';
import { NextFlights } from '../flights.ts';
import type { Logger } from '../logger.ts';
import type { ClaimedDelivery } from './claim-store.ts';
import { DueTimer } from './due-timer.ts';

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
  /**
   * Milliseconds until the earliest delivery becomes claimable that is not claimable now (a due
   * time, or the end of a lease), by the database's clock; null when none will.
   */
  nextDueInMs: () => Promise<number | null>;
  /**
   * How often an idle dispatcher looks for due deliveries nobody announced; null for never. Only
   * the embedded database needs it: its notifications do not reach other connections.
   */
  pollIntervalMs: number | null;
  logger: Logger;
}

/** How soon a claim, or the reading of the next due time, is tried again after the database refused it. */
const RETRY_AFTER_FAILURE_MS = 1_000;

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
 * wake-up, the timer). An attempt that hangs holds only its own place.
 *
 * It is woken by `nudge()` (a notification that something became due now, an attempt's end) and by
 * one timer (`DueTimer`): each claim round that leaves places free reads the next due time from
 * the deliveries and arms the timer for it, so whatever becomes claimable later (a retry, the
 * lease of a worker that died) is claimed when it does, without a poll.
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
  /**
   * The claim rounds and the readings of the next due time: asked for while one runs, they are
   * made once, after it (the service's single-flight rule `next`).
   */
  readonly #rounds = new NextFlights<'claim' | 'due', void>();
  /** The last round asked for of each kind: it ends after every earlier one (awaited by `stop`). */
  #lastClaim: Promise<unknown> = Promise.resolve();
  #lastReading: Promise<unknown> = Promise.resolve();
  #stopped = false;
  readonly #poller: NodeJS.Timeout | null = null;
  readonly #timer: DueTimer;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    // Every attempt in flight listens to the one shutdown signal.
    setMaxListeners((UNANSWERED + RECORDING + 1) * options.concurrency + 10, this.#abort.signal);
    this.#timer = new DueTimer(() => this.nudge());
    if (options.pollIntervalMs !== null) {
      this.#poller = setInterval(() => this.nudge(), options.pollIntervalMs);
      this.#poller.unref();
    }
  }

  /** Something becomes due `inMs` from now (a retry this worker scheduled): wake then. */
  dueIn(inMs: number): void {
    this.#timer.in(inMs);
  }

  /** Something may have become due: claim what the free places allow. */
  nudge(): void {
    if (this.#stopped) return;
    // A nudge that comes once the round's claim is under way is served by the next round.
    this.#lastClaim = this.#rounds.next('claim', async (started) => {
      started();
      await this.#claimOnce();
    });
  }

  async #claimOnce(): Promise<void> {
    const { concurrency } = this.#options;
    const free = Math.min(UNANSWERED * concurrency - this.#unanswered, (UNANSWERED + RECORDING) * concurrency - this.#running.size);
    if (free <= 0 || this.#stopped) return;
    let claimed: ClaimedDelivery[];
    try {
      claimed = await this.#options.claim(free);
    } catch (error) {
      // The database is away: the timer tries again.
      this.#options.logger.warn({ err: error }, 'webhook claim failed');
      this.#timer.in(RETRY_AFTER_FAILURE_MS);
      return;
    }
    for (const delivery of claimed) this.#start(delivery);
    // A full batch may have left more behind; a short one took all that is claimable now, so
    // the timer is armed for what becomes claimable next (read after the claim, it sees its leases).
    if (claimed.length === free) this.nudge();
    else this.#armForNextDue();
  }

  /**
   * Reads the next due time and arms the timer for it, beside the claims (a burst's claims do not
   * wait on it).
   */
  #armForNextDue(): void {
    if (this.#stopped) return;
    this.#lastReading = this.#rounds.next('due', async (started) => {
      started();
      if (this.#stopped) return;
      try {
        const inMs = await this.#options.nextDueInMs();
        if (inMs !== null) this.#timer.in(inMs);
      } catch (error) {
        this.#options.logger.warn({ err: error }, 'webhook due-time look-ahead failed');
        this.#timer.in(RETRY_AFTER_FAILURE_MS);
      }
    });
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
    if (this.#poller) clearInterval(this.#poller);
    this.#timer.stop();
    await this.#lastClaim;
    await this.#lastReading;
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.#running), new Promise((resolve) => (grace = setTimeout(resolve, graceMs)))]);
    clearTimeout(grace);
    this.#abort.abort();
    await Promise.all(this.#running);
  }
}
