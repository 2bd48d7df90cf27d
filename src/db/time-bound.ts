import type pg from 'pg';
import { DatabaseTimeSpent } from '../errors.ts';
import type { StatementMeter, TimeAllowance } from './database-types.ts';

/** One statement of a metered request, running. */
interface Running {
  started: number;
  /** Cancels it on the server; null where nothing can (the embedded database, a pooler). */
  cancel: (() => Promise<void>) | null;
  cancelling: Promise<void> | null;
}

/** How early more time is asked for: when half of what is allowed is left, so that the answer comes before it is spent. */
const ASK_WHEN_LEFT = 1 / 2;

/**
 * Runs the statements of one request within the database time its meter's allowance gives. While
 * statements run (several at once when a request's loaders send theirs together), a timer is set
 * for the moment their time together nears what is allowed, when more is asked for, the
 * statements running on meanwhile; once none is given, they run to what is allowed, are each
 * cancelled on the server then, and no other starts. A cancelled statement keeps its connection
 * until the cancellation has been answered, so that it never reaches the connection's next
 * statement. What each statement took is added to the meter, as every metered statement's is.
 */
export class TimeBound {
  readonly #meter: StatementMeter;
  readonly #running = new Set<Running>();
  #timer: NodeJS.Timeout | undefined;
  #asking: Promise<void> | null = null;
  /** No more is given: what is allowed is all there is. */
  #last = false;
  #stopped = false;

  constructor(meter: StatementMeter) {
    this.#meter = meter;
  }

  async run<T>(statement: () => Promise<T>, cancel: (() => Promise<void>) | null): Promise<T> {
    const allowance = this.#meter.allowance;
    if (allowance) {
      while (!this.#last && this.#spent() >= allowance.ms) await this.#askMore(allowance);
      if (this.#stopped || this.#spent() >= allowance.ms) {
        this.#stopped = true;
        throw new DatabaseTimeSpent(allowance.stoppedBecause);
      }
    }
    const running: Running = { started: performance.now(), cancel, cancelling: null };
    this.#running.add(running);
    this.#schedule();
    try {
      return await statement();
    } catch (error) {
      if (running.cancelling && allowance) throw new DatabaseTimeSpent(allowance.stoppedBecause, error);
      throw error;
    } finally {
      this.#running.delete(running);
      this.#meter.statements += 1;
      this.#meter.ms += performance.now() - running.started;
      this.#schedule();
      if (running.cancelling) await running.cancelling;
    }
  }

  /** The time spent so far, the statements running included. */
  #spent(): number {
    const now = performance.now();
    let spent = this.#meter.ms;
    for (const running of this.#running) spent += now - running.started;
    return spent;
  }

  #askMore(allowance: TimeAllowance): Promise<void> {
    if (this.#asking) return this.#asking;
    if (this.#stopped) return Promise.resolve();
    const asking = allowance
      .more()
      .then(
        (more) => {
          if (more > 0) allowance.ms += more;
          else this.#last = true;
        },
        () => {
          this.#last = true;
        },
      )
      .finally(() => {
        this.#asking = null;
        this.#schedule();
      });
    this.#asking = asking;
    clearTimeout(this.#timer);
    return asking;
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const allowance = this.#meter.allowance;
    if (!allowance || this.#stopped || this.#running.size === 0) return;
    // The statements running share what is left: their time together reaches a point after this long.
    const until = (point: number) => Math.max(0, (point - this.#spent()) / this.#running.size);
    if (this.#asking) return;
    if (this.#last) this.#timer = setTimeout(() => this.#stop(), until(allowance.ms));
    else this.#timer = setTimeout(() => void this.#askMore(allowance), until(allowance.ms * (1 - ASK_WHEN_LEFT)));
  }

  #stop(): void {
    this.#stopped = true;
    this.#last = true;
    for (const running of this.#running) {
      if (running.cancel && !running.cancelling) running.cancelling = running.cancel().catch(() => {});
    }
  }
}

/**
 * Cancels, from another connection of `pool`, the statement running on the connection whose
 * server process is `pid` (PostgreSQL's `pg_cancel_backend`: the statement fails with SQLSTATE
 * 57014; a process with no statement running is left as it is).
 */
export async function cancelOn(pool: pg.Pool, pid: number): Promise<void> {
  await pool.query('SELECT pg_cancel_backend($1)', [pid]);
}
