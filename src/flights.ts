/**
 * Work that concurrent callers share, per key: the service's one mechanism for it. Two rules:
 *
 * - `share`: a caller joins the run under way for its key, if any (a lookup or a build whose
 *   result does not depend on when it started);
 * - `next`: a caller never joins a run that has already started, because what it reads must
 *   count everything committed before the caller came (a data version read). Callers share a run
 *   not started yet; at most one run per key is under way, and callers who come meanwhile share
 *   the next one, started as soon as it ends.
 *
 * Each caller learns whether it started the run or joined another's, so that what it reports
 * (a cache outcome, a metric) says what happened.
 */
export interface Flight<V> {
  value: V;
  /** True when the run was started by another caller. */
  joined: boolean;
}

export class Flights<K, V> {
  readonly #running = new Map<K, Promise<V>>();

  /** The result of the run under way for `key`, or of a new run of `task`. */
  async share(key: K, task: () => Promise<V>): Promise<Flight<V>> {
    const running = this.#running.get(key);
    if (running) return { value: await running, joined: true };
    const run = task().finally(() => this.#running.delete(key));
    this.#running.set(key, run);
    return { value: await run, joined: false };
  }

  /** How many runs are under way (for tests and metrics). */
  get size(): number {
    return this.#running.size;
  }
}

export class NextFlights<K, V> {
  /** A run not started yet: callers may still join it. */
  readonly #waiting = new Map<K, Promise<V>>();
  /** The run under way, settled (never rejected) once it ends: with its failure, or null. */
  readonly #underWay = new Map<K, Promise<{ failure: unknown } | null>>();

  /**
   * The result of a run of `task` that starts after this call. `task` calls `started()` at the
   * moment from which a joining caller would be too late (a statement about to be written). When
   * the run under way as this caller came fails in a way `shareFailure` names (the database did not
   * answer), the callers waiting for the next run get that failure instead of a run of their own:
   * they have waited for it already, and a second wait as long would double theirs.
   */
  async next(key: K, task: (started: () => void) => Promise<V>, shareFailure?: (error: unknown) => boolean): Promise<Flight<V>> {
    const waiting = this.#waiting.get(key);
    if (waiting) return { value: await waiting, joined: true };
    // From `started()` on (or once the run ends) nobody joins this run: later callers share the next.
    const close = () => {
      if (this.#waiting.get(key) === run) this.#waiting.delete(key);
    };
    const run: Promise<V> = (this.#underWay.get(key) ?? Promise.resolve(null)).then((before) => {
      if (before !== null && shareFailure?.(before.failure)) throw before.failure;
      let ended!: (outcome: { failure: unknown } | null) => void;
      const underWay = new Promise<{ failure: unknown } | null>((resolve) => (ended = resolve));
      const result = task(() => {
        close();
        this.#underWay.set(key, underWay);
      });
      void result.then(
        () => ended(null),
        (failure: unknown) => ended({ failure }),
      );
      void underWay.then(() => {
        if (this.#underWay.get(key) === underWay) this.#underWay.delete(key);
      });
      return result;
    });
    this.#waiting.set(key, run);
    void run.then(close, close);
    return { value: await run, joined: false };
  }
}

/**
 * The third rule, for work that must not overlap per key but is not shared: each caller's run
 * starts once the run asked for before it has ended (whatever its outcome), in the order asked;
 * different keys run side by side. A build that reuses what the previous one left (an answer in
 * pieces) takes its turn after it, instead of two builds of one answer doing the same work.
 */
export class Turns<K> {
  readonly #last = new Map<K, Promise<unknown>>();

  async inTurn<T>(key: K, work: () => Promise<T>): Promise<T> {
    const before = this.#last.get(key);
    const run = before ? before.then(work, work) : work();
    const settled = run.catch(() => undefined);
    this.#last.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.#last.get(key) === settled) this.#last.delete(key);
    }
  }
}
