import { performance } from 'node:perf_hooks';

/** No turn of the event loop spends longer than this assembling one answer. */
const TURN_MS = 3;

export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A clock that says when the current turn has had its share: then `pause` yields to others. */
export class TurnBudget {
  #since = performance.now();
  /** Whether this turn has had its share: then `await budget.pause()`. Checked without awaiting, so that a piece that fits costs no microtask. */
  get spent(): boolean {
    return performance.now() - this.#since >= TURN_MS;
  }
  async pause(): Promise<void> {
    await nextTurn();
    this.#since = performance.now();
  }
}

