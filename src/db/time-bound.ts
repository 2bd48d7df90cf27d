import type pg from 'pg';
import { DatabaseTimeSpent } from '../errors.ts';
import type { StatementMeter } from './database-types.ts';

/** One statement of a metered request, running. */
interface Running {
  started: number;
  /** Cancels it on the server; null where nothing can (the embedded database, a pooler). */
  cancel: (() => Promise<void>) | null;
  cancelling: Promise<void> | null;
}

/**
 * Runs the statements of one request within the database time its meter allows (`limitMs`): no
 * statement starts once the time is spent, and while statements run (several at once when a
 * request's loaders send theirs together) one timer is set for the moment their time together
 * reaches the limit, when each is cancelled on the server. A cancelled statement keeps its
 * connection until the cancellation has been answered, so that it never reaches the connection's
 * next statement. What each took is added to the meter, as every metered statement's is.
 */
export class TimeBound {
  readonly #meter: StatementMeter;
  readonly #limitMs: number | null;
  readonly #running = new Set<Running>();
  #timer: NodeJS.Timeout | undefined;

  constructor(meter: StatementMeter) {
    this.#meter = meter;
    this.#limitMs = meter.limitMs ?? null;
  }

  async run<T>(statement: () => Promise<T>, cancel: (() => Promise<void>) | null): Promise<T> {
    const limit = this.#limitMs;
    if (limit !== null && this.#meter.ms >= limit) throw new DatabaseTimeSpent(limit);
    const running: Running = { started: performance.now(), cancel, cancelling: null };
    this.#running.add(running);
    this.#schedule();
    try {
      return await statement();
    } catch (error) {
      if (running.cancelling && limit !== null) throw new DatabaseTimeSpent(limit, error);
      throw error;
    } finally {
      this.#running.delete(running);
      this.#meter.statements += 1;
      this.#meter.ms += performance.now() - running.started;
      this.#schedule();
      if (running.cancelling) await running.cancelling;
    }
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#limitMs === null || this.#running.size === 0) return;
    const now = performance.now();
    let spent = this.#meter.ms;
    for (const running of this.#running) spent += now - running.started;
    // The statements running share what is left: their time together reaches it after this long.
    const wait = Math.max(0, (this.#limitMs - spent) / this.#running.size);
    this.#timer = setTimeout(() => this.#stop(), wait);
  }

  #stop(): void {
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
