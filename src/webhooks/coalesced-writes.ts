import DataLoader from 'dataloader';

/**
 * docs/architecture.md, "Webhook isolation": one statement writes what many attempts asked for.
 * Requests made while a write is under way wait for it and then go together, in one statement
 * (and one commit): an idle worker writes at once, a busy one in batches as large as the load.
 */
export function coalescedWrites<K, V>(write: (keys: readonly K[]) => Promise<V[]>, maxBatchSize: number): DataLoader<K, V> {
  let inFlight: Promise<unknown> = Promise.resolve();
  return new DataLoader<K, V>(
    (keys) => {
      const written = write(keys);
      inFlight = written.catch(() => {});
      return written;
    },
    { cache: false, maxBatchSize, batchScheduleFn: (dispatch) => void inFlight.then(() => setImmediate(dispatch)) },
  );
}
