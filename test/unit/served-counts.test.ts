import { describe, expect, it } from 'vitest';
import { ServedCounts } from '../../src/answer-cache/served-counts.ts';

describe('the floor of served counts', () => {
  it('keeps the highest count served per workspace, never lowered by an older answer', () => {
    const served = new ServedCounts(1000);
    expect(served.floor('ws')).toBe(0);
    served.raise('ws', 7);
    served.raise('ws', 5);
    expect(served.floor('ws')).toBe(7);
    expect(served.floor('other')).toBe(0);
  });

  it('forgets a count a second after the lag bound, when every replica in use holds it', async () => {
    // The counts' own clock, so that a busy machine's late timers cannot age them. The cache reads
    // the clock at most once a millisecond (it keeps the reading that long): a real tick between moves.
    const clock = { time: 1_000, now: () => clock.time };
    const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
    const served = new ServedCounts(10, clock);
    served.raise('ws', 7);
    clock.time += 1_009;
    await tick();
    expect(served.floor('ws')).toBe(7);
    clock.time += 2;
    await tick();
    expect(served.floor('ws')).toBe(0);
  });
});
