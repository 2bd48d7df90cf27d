import type pg from 'pg';
import { isDatabaseUnavailable } from '../errors.ts';

/**
 * How long after the statement timeout the client gives up waiting by itself: long enough for a
 * reachable server's own cancellation (SQLSTATE 57014) to arrive first, short enough that a silent
 * database (a partition, a stalled pooler: nothing refused, nothing answered) is answered 503
 * within the statement timeout and a second.
 */
const CLIENT_MARGIN_MS = 750;

/** The client's bound of one unit of database work (a connection's wait and its statements), from the statement timeout. */
export function clientBoundMs(statementTimeoutMs: number): number {
  return statementTimeoutMs + CLIENT_MARGIN_MS;
}

/** The pool's `connect`, given up after `ms` (the connection, should it come later, goes back to the pool). */
async function connectWithin(pool: pg.Pool, ms: number): Promise<pg.PoolClient> {
  const connecting = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('timeout exceeded when trying to connect')), ms);
  });
  try {
    return await Promise.race([connecting, expired]);
  } catch (error) {
    connecting.then((client) => client.release(), () => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Units of database work on `pool` within `bound` ms each (none when null): `start` takes a
 * connection and says when the unit must end; `remaining` is what is left of it as a statement's
 * client-side timeout (node-postgres's `query_timeout`).
 */
export function unitOfWork(pool: pg.Pool, bound: number | null) {
  return {
    async start(): Promise<{ client: pg.PoolClient; deadline: number | null }> {
      if (bound === null) return { client: await pool.connect(), deadline: null };
      const deadline = Date.now() + bound;
      return { client: await connectWithin(pool, bound), deadline };
    },
    remaining: (deadline: number | null) => (deadline === null ? {} : { query_timeout: Math.max(1, deadline - Date.now()) }),
  };
}

/**
 * Runs `work` on a connection `start` takes, tracking its statements (`run` wraps each one): a
 * connection that broke, timed out or still has statements in flight is not handed to anyone else.
 */
export async function onClient<T>(
  start: () => Promise<{ client: pg.PoolClient; deadline: number | null }>,
  work: (client: pg.PoolClient, deadline: number | null, run: <R>(statement: () => Promise<R>) => Promise<R>) => Promise<T>,
): Promise<T> {
  const { client, deadline } = await start();
  let broken: unknown;
  let pending = 0;
  // A connection lost while checked out is reported here; the statement's own promise fails too.
  const onError = (error: unknown) => (broken = error);
  client.on('error', onError);
  const run = async <R>(statement: () => Promise<R>): Promise<R> => {
    pending += 1;
    try {
      return await statement();
    } catch (error) {
      if (isDatabaseUnavailable(error)) broken = error;
      throw error;
    } finally {
      pending -= 1;
    }
  };
  try {
    return await work(client, deadline, run);
  } finally {
    client.off('error', onError);
    client.release(broken instanceof Error ? broken : pending > 0 ? new Error('released with statements in flight') : undefined);
  }
}
