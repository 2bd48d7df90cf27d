import { describe, expect, it } from 'vitest';
import { Flights, NextFlights, Turns } from '../../src/flights.ts';

/** A promise and the functions that settle it. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((ok, fail) => ((resolve = ok), (reject = fail)));
  return { promise, resolve, reject };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('Flights.share', () => {
  it('runs a task once for concurrent callers of one key, and tells each whether it joined', async () => {
    const flights = new Flights<string, number>();
    const gate = deferred<number>();
    let runs = 0;
    const task = () => ((runs += 1), gate.promise);
    const calls = [flights.share('a', task), flights.share('a', task), flights.share('b', async () => 9)];
    gate.resolve(7);
    expect(await Promise.all(calls)).toEqual([
      { value: 7, joined: false },
      { value: 7, joined: true },
      { value: 9, joined: false },
    ]);
    expect(runs).toBe(1);
  });

  it('runs again once the run has ended, and lets a failure reach every caller of that run only', async () => {
    const flights = new Flights<string, number>();
    const failing = deferred<number>();
    const first = flights.share('a', () => failing.promise);
    const joined = flights.share('a', async () => 0);
    failing.reject(new Error('down'));
    await expect(first).rejects.toThrow('down');
    await expect(joined).rejects.toThrow('down');
    expect(await flights.share('a', async () => 3)).toEqual({ value: 3, joined: false });
    expect(flights.size).toBe(0);
  });
});

describe('NextFlights.next', () => {
  it('lets callers join a run not started yet, never one already started', async () => {
    const flights = new NextFlights<string, number>();
    const connection = deferred<void>();
    const answer = deferred<number>();
    let runs = 0;
    const read = (value: () => Promise<number>) => async (started: () => void) => {
      runs += 1;
      await connection.promise;
      started();
      return value();
    };
    const waiting = [flights.next('w', read(() => answer.promise)), flights.next('w', read(() => answer.promise))];
    await turn();
    connection.resolve();
    await turn();
    // Started: a caller now gets a run of its own, which starts only once this one ends.
    const later = flights.next('w', read(async () => 2));
    const alsoLater = flights.next('w', read(async () => 2));
    await turn();
    expect(runs).toBe(1);
    answer.resolve(1);
    expect(await Promise.all(waiting)).toEqual([
      { value: 1, joined: false },
      { value: 1, joined: true },
    ]);
    expect(await Promise.all([later, alsoLater])).toEqual([
      { value: 2, joined: false },
      { value: 2, joined: true },
    ]);
    expect(runs).toBe(2);
  });

  it('starts the next run even when the one under way fails, and keeps keys apart', async () => {
    const flights = new NextFlights<string, number>();
    const wire = deferred<number>();
    const failing = flights.next('w', async (started) => {
      started();
      return wire.promise;
    });
    await turn();
    const next = flights.next('w', async (started) => (started(), 5));
    const other = flights.next('x', async (started) => (started(), 6));
    expect((await other).value).toBe(6);
    wire.reject(new Error('lost'));
    await expect(failing).rejects.toThrow('lost');
    expect((await next).value).toBe(5);
  });

  it('gives the callers waiting for the next run the failure of the run under way when it is one they share, without running again', async () => {
    const flights = new NextFlights<string, number>();
    const wire = deferred<number>();
    const unanswered = new Error('the database did not answer');
    const shared = (error: unknown) => error === unanswered;
    const failing = flights.next('w', async (started) => (started(), wire.promise), shared);
    await turn();
    let ran = 0;
    const waitingOne = flights.next('w', async (started) => (started(), (ran += 1)), shared);
    const waitingTwo = flights.next('w', async (started) => (started(), (ran += 1)), shared);
    wire.reject(unanswered);
    await expect(failing).rejects.toBe(unanswered);
    await expect(waitingOne).rejects.toBe(unanswered);
    await expect(waitingTwo).rejects.toBe(unanswered);
    expect(ran).toBe(0);
    // A caller that comes after runs again.
    expect((await flights.next('w', async (started) => (started(), 9), shared)).value).toBe(9);
  });
});

describe('Turns', () => {
  it('runs the work of one key one after another in the order asked, a failure included, and other keys side by side', async () => {
    const turns = new Turns<string>();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = turns.inTurn('a', async () => {
      log.push('a1 start');
      await gate;
      log.push('a1 end');
      throw new Error('a1 failed');
    });
    const second = turns.inTurn('a', async () => {
      log.push('a2');
      return 2;
    });
    const other = turns.inTurn('b', async () => {
      log.push('b1');
      return 1;
    });
    expect(await other).toBe(1);
    expect(log).toEqual(['a1 start', 'b1']);
    release();
    await expect(first).rejects.toThrow('a1 failed');
    expect(await second).toBe(2);
    expect(log).toEqual(['a1 start', 'b1', 'a1 end', 'a2']);
  });
});
