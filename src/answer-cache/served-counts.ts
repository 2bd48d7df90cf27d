import { LRUCache } from 'lru-cache';

/**
 * Per workspace, the highest committed count (`committedCount`) among the answers this instance
 * has served lately, so that a replica behind it is never used for that workspace: an instance
 * never answers with data older than an answer it already gave.
 *
 * A count needs keeping only until every replica that may take reads is known to hold it: a
 * replica takes reads only while it holds every change committed more than the lag bound ago, so
 * a count is forgotten that long (plus a second) after it was last raised. That bounds the memory
 * and lets the floor come down after a restore that set the counts back.
 */
export class ServedCounts {
  readonly #counts: LRUCache<string, number>;

  /** `clock` is the time the counts age by (a test's own; `performance` by default). */
  constructor(maxLagMs: number, clock?: { now(): number }) {
    this.#counts = new LRUCache<string, number>({ max: 100_000, ttl: maxLagMs + 1000, ttlAutopurge: false, ...(clock ? { perf: clock } : {}) });
  }

  floor(workspaceId: string): number {
    return this.#counts.get(workspaceId) ?? 0;
  }

  raise(workspaceId: string, count: number): void {
    const current = this.#counts.get(workspaceId);
    if (current === undefined || count >= current) this.#counts.set(workspaceId, count);
  }
}
