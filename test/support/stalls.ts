/**
 * The time this process was kept from running (a loaded machine's scheduler, a long collection)
 * while `watch` was on: a ticker asks to run every `every` ms and adds up how late it ran. What a
 * request's wall-clock time owes to that is no wait of the service's own, so a bound on the
 * service's waiting, measured by a client in the same process, allows it. A timer's usual
 * lateness of a millisecond or two is not counted.
 */
export function watchStalls(every = 10) {
  let late = 0;
  let expected = performance.now() + every;
  const timer = setInterval(() => {
    const now = performance.now();
    late += Math.max(0, now - expected - 2);
    expected = now + every;
  }, every);
  return {
    /** The lateness so far, in ms. */
    get ms() {
      return late;
    },
    stop: () => clearInterval(timer),
  };
}
