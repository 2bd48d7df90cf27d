/** Work per key run one at a time, in the order it was asked for; different keys run side by side. */
export class InTurn<K> {
  readonly #last = new Map<K, Promise<unknown>>();

  async inTurn<T>(key: K, work: () => Promise<T>): Promise<T> {
    const before = this.#last.get(key);
    const run = (before ? before.then(work, work) : work());
    const settled = run.catch(() => undefined);
    this.#last.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.#last.get(key) === settled) this.#last.delete(key);
    }
  }
}
