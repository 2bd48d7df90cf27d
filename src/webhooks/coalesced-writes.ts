import DataLoader from 'dataloader';

/**
 * docs/architecture.md, "Webhook isolation": one statement writes what many attempts asked for.
 * At most `inFlight` writes are under way at once; requests made while they all are wait for one
 * to end and then go together, in one statement (and one commit): an idle worker writes at once,
 * a busy one in batches as large as the load. Writes whose order does not matter (the bodies) may
 * run two at a time: the second's round trip overlaps the first's work in the database instead of
 * queueing behind it in the worker; those whose order does (the outcomes, which keep each
 * endpoint's health in the order of its attempts) one at a time.
 */
export function coalescedWrites<K, V>(write: (keys: readonly K[]) => Promise<V[]>, maxBatchSize: number, inFlight: number): DataLoader<K, V> {
  let running = 0;
  const waiting: Array<() => void> = [];
  // A batch takes its place when it is scheduled, so that no two batches count on the same one.
  const place = () => (running < inFlight ? ((running += 1), Promise.resolve()) : new Promise<void>((resolve) => waiting.push(resolve)));
  const free = () => {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  };
  return new DataLoader<K, V>(
    async (keys) => {
      try {
        return await write(keys);
      } finally {
        free();
      }
    },
    // DataLoader schedules each batch once (a full one starts the next batch): one place per batch.
    { cache: false, maxBatchSize, batchScheduleFn: (dispatch) => void place().then(() => setImmediate(dispatch)) },
  );
}
