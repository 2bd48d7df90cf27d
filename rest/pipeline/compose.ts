import type { RequestState } from './request-state.ts';

/**
 * One step of a route: a check that throws the contract's error (405, 401, 429, 403, 400 …) or
 * lets the request on, or the route's answer, which writes it. A step that needs no I/O returns
 * nothing; one that waits returns its promise.
 */
export type Step = (state: RequestState) => void | Promise<void>;

/**
 * A route's steps as one function that runs them in their declared order, each after the one
 * before has finished; the first that throws ends the request with its error. Steps that return
 * nothing run one after the other in the same turn: a cached answer then waits only where it
 * must (its data version read), not once per step.
 */
export function compose(steps: readonly Step[]): (state: RequestState) => void | Promise<void> {
  const runFrom = (state: RequestState, first: number): void | Promise<void> => {
    for (let i = first; i < steps.length; i += 1) {
      const waiting = steps[i]!(state);
      if (waiting !== undefined) return i + 1 === steps.length ? waiting : waiting.then(() => runFrom(state, i + 1));
    }
  };
  return (state) => runFrom(state, 0);
}
