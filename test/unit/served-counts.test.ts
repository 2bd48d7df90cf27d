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
    const served = new ServedCounts(10);
    served.raise('ws', 7);
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(served.floor('ws')).toBe(7);
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(served.floor('ws')).toBe(0);
  });
});
