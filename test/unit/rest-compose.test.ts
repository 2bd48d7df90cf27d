import { describe, expect, it } from 'vitest';
import { compose } from '../../rest/pipeline/compose.ts';

describe('compose', () => {
  it('runs the steps in their declared order, the steps that need no I/O in one turn, and stops at the first that throws', async () => {
    const ran: string[] = [];
    const run = compose([
      () => void ran.push('a'),
      async () => {
        ran.push('b');
      },
      () => void ran.push('c'),
      () => {
        throw new Error('d refuses');
      },
      () => void ran.push('e'),
    ]);
    await expect(run({} as never)).rejects.toThrow('d refuses');
    expect(ran).toEqual(['a', 'b', 'c']);
    const syncRan: string[] = [];
    expect(compose([() => void syncRan.push('x'), () => void syncRan.push('y')])({} as never)).toBeUndefined();
    expect(syncRan).toEqual(['x', 'y']);
  });
});
