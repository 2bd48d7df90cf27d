import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import type { ClaimedDelivery } from '../../src/webhooks/claim-store.ts';
import { Dispatcher } from '../../src/webhooks/dispatcher.ts';

/**
 * The dispatcher's wake-ups on a fake clock: a nudge (a notification that something is due now),
 * one timer armed from the next due time the deliveries give, and a poll only when asked for (the
 * embedded database). The deliveries are a list of due times; a claim takes those due by now.
 */
class Deliveries {
  readonly due: number[] = [];
  readonly claimedAt: number[] = [];
  claims = 0;
  refuse = 0;

  claim = async (limit: number): Promise<ClaimedDelivery[]> => {
    this.claims += 1;
    if (this.refuse > 0) {
      this.refuse -= 1;
      throw new Error('connection refused');
    }
    const now = Date.now();
    const taken = this.due.filter((at) => at <= now).slice(0, limit);
    for (const at of taken) this.due.splice(this.due.indexOf(at), 1);
    this.claimedAt.push(...taken.map(() => now));
    return taken.map((at) => ({ id: `dlv_${at}` }) as ClaimedDelivery);
  };

  nextDueInMs = async (): Promise<number | null> => {
    const future = this.due.filter((at) => at > Date.now());
    return future.length === 0 ? null : Math.min(...future) - Date.now();
  };
}

const logger = createLogger('silent');

describe('the webhook dispatcher wakes', () => {
  let deliveries: Deliveries;
  let dispatcher: Dispatcher | null = null;
  const start = (pollIntervalMs: number | null = null) => {
    dispatcher = new Dispatcher({
      claim: deliveries.claim,
      nextDueInMs: deliveries.nextDueInMs,
      attempt: async () => {},
      concurrency: 4,
      pollIntervalMs,
      logger,
    });
    return dispatcher;
  };

  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
    deliveries = new Deliveries();
  });

  afterEach(async () => {
    await dispatcher?.stop(0);
    dispatcher = null;
    vi.useRealTimers();
  });

  it('at a nudge, and then by one timer armed from the next due time: a delivery due later is claimed when it falls due, with no claim between', async () => {
    deliveries.due.push(Date.now(), Date.now() + 30_000);
    start().nudge();
    await vi.advanceTimersByTimeAsync(0);
    expect(deliveries.claimedAt).toEqual([1_000_000]);
    await vi.advanceTimersByTimeAsync(1_000);
    const claimsAfterTheFirst = deliveries.claims;
    await vi.advanceTimersByTimeAsync(28_990);
    expect(deliveries.claims).toBe(claimsAfterTheFirst);
    await vi.advanceTimersByTimeAsync(20);
    expect(deliveries.claimedAt).toEqual([1_000_000, expect.any(Number)]);
    expect(deliveries.claimedAt[1]! - 1_030_000).toBeGreaterThanOrEqual(0);
    expect(deliveries.claimedAt[1]! - 1_030_000).toBeLessThan(10);
  });

  it('never by a poll on PostgreSQL: idle, with nothing due, it claims nothing for an hour', async () => {
    start().nudge();
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(deliveries.claims).toBe(1);
  });

  it('by its poll on the embedded database, whose notifications do not reach other connections', async () => {
    start(500).nudge();
    await vi.advanceTimersByTimeAsync(0);
    // A delivery recorded through another connection, unannounced.
    deliveries.due.push(Date.now() + 100);
    await vi.advanceTimersByTimeAsync(500);
    expect(deliveries.claimedAt).toEqual([1_000_500]);
  });

  it('at the due time of a retry it scheduled, and at a later one it was told of meanwhile, read again from the deliveries', async () => {
    const worker = start();
    worker.nudge();
    await vi.advanceTimersByTimeAsync(0);
    deliveries.due.push(Date.now() + 1_000, Date.now() + 5_000);
    worker.dueIn(1_000);
    worker.dueIn(5_000);
    await vi.advanceTimersByTimeAsync(1_010);
    expect(deliveries.claimedAt).toEqual([expect.any(Number)]);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(deliveries.claimedAt).toHaveLength(2);
    expect(deliveries.claimedAt[1]! - 1_005_000).toBeLessThan(10);
    expect(deliveries.due).toEqual([]);
  });

  it('again a second after the database refused a claim, without a poll', async () => {
    deliveries.due.push(Date.now());
    deliveries.refuse = 1;
    start().nudge();
    await vi.advanceTimersByTimeAsync(900);
    expect(deliveries.claimedAt).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(deliveries.claimedAt).toHaveLength(1);
  });

  it('again after a claim under way when a nudge comes: what the nudge announced is not missed', async () => {
    let release!: () => void;
    const first = deliveries.claim;
    deliveries.claim = async (limit) => {
      const taken = await first(limit);
      if (deliveries.claims === 1) await new Promise<void>((resolve) => (release = resolve));
      return taken;
    };
    const worker = start();
    worker.nudge();
    await vi.advanceTimersByTimeAsync(0);
    // Recorded and announced while the first claim runs (it read the table before).
    deliveries.due.push(Date.now());
    worker.nudge();
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(deliveries.claimedAt).toEqual([1_000_000]);
  });

  it('again after a nudge that comes as a claim round ends, at whatever moment: none is lost', async () => {
    for (let ticks = 0; ticks < 8; ticks += 1) {
      deliveries = new Deliveries();
      const first = deliveries.claim;
      // As the first claim's answer arrives, a delivery is recorded and announced a few microtasks later.
      deliveries.claim = async (limit) => {
        if (deliveries.claims === 0) {
          let later = Promise.resolve();
          for (let i = 0; i < ticks; i += 1) later = later.then(() => {});
          void later.then(() => {
            deliveries.due.push(Date.now());
            dispatcher!.nudge();
          });
        }
        return first(limit);
      };
      start().nudge();
      await vi.advanceTimersByTimeAsync(0);
      expect(deliveries.claimedAt, `a nudge ${ticks} microtasks after the claim`).toEqual([1_000_000]);
      await dispatcher!.stop(0);
    }
  });

  it('no more once stopped', async () => {
    deliveries.due.push(Date.now() + 1_000);
    const worker = start();
    worker.nudge();
    await vi.advanceTimersByTimeAsync(0);
    await worker.stop(0);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(deliveries.claims).toBe(1);
  });
});
