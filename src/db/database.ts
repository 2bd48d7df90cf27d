import { join } from 'node:path';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { acquireLock, publishConnection, readLiveLock, releaseLock } from './embedded-lock.ts';
import { serveEmbedded, type EmbeddedSocket } from './embedded-socket.ts';
import { loadPGlite } from './pglite-module.ts';
import { ensurePrivateDirectory, removeGroupAndOtherAccess } from './private-files.ts';
import { poolTraits, type PoolTraits } from './server-probe.ts';
import { StatementNames } from './statement-names.ts';
import { clientBoundMs, onClient, unitOfWork } from './client-bound.ts';
import { TimeBound, cancelOn } from './time-bound.ts';
import type { Database, DatabaseKind, DatabaseOptions, PoolShare, Queryable, QueryListener } from './database-types.ts';

export type { Database, DatabaseKind, DatabaseOptions, PoolShare, Queryable, QueryListener, StatementMeter, TimeAllowance } from './database-types.ts';

// timestamptz and timestamp arrive as Date; int8 counts as numbers (they stay far below 2^53).
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

const DEFAULT_POOL_SIZE = 10;

/**
 * Another pool on the database `db` reads, with connections, a statement timeout and an
 * application name of its own: a bulkhead, so that work sent through it cannot take the
 * connections of `db`'s pool. On the embedded database it is another set of connections to the
 * same PGlite, which runs one statement at a time for all of them.
 */
export async function openPoolBeside(db: Database, share: PoolShare): Promise<Database> {
  // Statements on either pool reach the same observers (`onQuery`): they run on the same database.
  const listeners = listenersOf.get(db);
  if (db.kind === 'embedded') return wrapPool('embedded', db.connectionString, share, async () => {}, EMBEDDED, listeners);
  // Probed without the timeout check: through a pooler the role's timeout (checked for `db`) applies on the server.
  const traits = await poolTraits(db.connectionString, { preparedStatements: share.preparedStatements });
  // A metered request's statements are cancelled from `db`'s pool: this one's connections may all be theirs.
  return wrapPool('postgres', db.connectionString, share, async () => {}, traits, listeners, db.pool);
}

/** The observers of each pool's statements, which a pool beside it shares. */
const listenersOf = new WeakMap<Database, Set<QueryListener>>();


export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.url) {
    return wrapPool('postgres', options.url, options, async () => {}, await poolTraits(options.url, options));
  }
  return openEmbedded(options);
}

async function openEmbedded(options: DatabaseOptions): Promise<Database> {
  const dataDir = options.dataDir ?? 'memory://';
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) {
    ensurePrivateDirectory(dataDir);
    const holder = await readLiveLock(dataDir);
    if (holder?.connectionString) {
      // Another process (the server) has these files open: use its socket, whose directory it
      // left in the lock file (the socket's directory lets only this user in).
      return wrapPool('embedded', holder.connectionString, { ...options, poolSize: 2 }, async () => {}, EMBEDDED);
    }
    await acquireLock(dataDir);
  }
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  let pglite: PGlite | null = null;
  let socket: EmbeddedSocket;
  try {
    // Loaded only here: importing PGlite costs a process some 40 MB it never needs on PostgreSQL.
    const embedded = await loadPGlite();
    pglite = await embedded.PGlite.create(inMemory ? dataDir : join(dataDir, 'pgdata'), options.initialData ? { loadDataDir: options.initialData } : {});
    if (!inMemory) await removeGroupAndOtherAccess(dataDir);
    socket = await serveEmbedded(pglite, poolSize + 8);
  } catch (error) {
    await pglite?.close().catch(() => {});
    if (!inMemory) await releaseLock(dataDir);
    throw error;
  }
  const { connectionString } = socket;
  if (!inMemory && options.shareEmbedded) await publishConnection(dataDir, connectionString);
  const opened = pglite;
  const database = await wrapPool('embedded', connectionString, { ...options, poolSize }, async () => {
    await socket.close();
    await opened.close();
    if (!inMemory) await releaseLock(dataDir);
  }, EMBEDDED);
  return Object.assign(database, { dumpData: () => opened.dumpDataDir('none') });
}

// Every connection to the embedded database shares one PGlite session, where two connections'
// statements of the same name would collide: there statements stay unnamed.
const EMBEDDED: PoolTraits = { startupParameters: false, namedStatements: false };

async function wrapPool(
  kind: DatabaseKind,
  connectionString: string,
  options: DatabaseOptions,
  closeBackend: () => Promise<void>,
  traits: PoolTraits,
  listeners = new Set<QueryListener>(),
  cancelFrom?: pg.Pool,
): Promise<Database> {
  // On PostgreSQL each unit of work (a connection's wait and its statements, or one statement on
  // the pool) is bounded on the client too: the server-side timeout cannot fire when nothing
  // reaches the server. Through a pooler the role's own timeout applies (checked at start).
  const bound = kind === 'postgres' && options.statementTimeoutMs ? clientBoundMs(options.statementTimeoutMs) : null;
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? (bound ?? 5_000),
    idleTimeoutMillis: 30_000,
    application_name: options.applicationName ?? 'course-booking-api',
    ...(bound !== null && traits.startupParameters ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  // An idle client losing its connection (database restart) must not crash the process;
  // the pool drops it and the next checkout connects again.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  let closed = false;
  let names = traits.namedStatements ? new StatementNames() : null;
  // Unknown while the server could not be reached: no warning about a pooler that may not be there.
  let pooled = kind === 'postgres' && !traits.startupParameters && !traits.later;
  let later = traits.later;
  // New connections are made from the pool's options (pg-pool's `options`, read per connection).
  pool.on('connect', () => {
    const ask = later;
    if (!ask) return;
    later = undefined;
    ask()
      .then((found) => {
        if (found.startupParameters && options.statementTimeoutMs) pool.options.statement_timeout = options.statementTimeoutMs;
        if (found.namedStatements) names = new StatementNames();
        pooled = !found.startupParameters;
      })
      .catch(() => (later = ask));
  });
  const arrayQuery = (text: string, values: readonly unknown[]): pg.QueryArrayConfig => ({
    name: names?.nameOf(text),
    text,
    values: values as unknown[],
    rowMode: 'array',
  });

  const { start, remaining } = unitOfWork(pool, bound);

  /** A checked-out client as a `Queryable`; `run` wraps each statement (failure tracking). */
  const clientQueryable = (
    client: pg.PoolClient,
    deadline: number | null,
    run: <T>(statement: () => Promise<T>) => Promise<T> = (statement) => statement(),
  ): Queryable => ({
    query(text, values) {
      for (const listener of listeners) listener(text, values);
      return run(() => client.query({ text, values: values as unknown[] | undefined, ...remaining(deadline) }));
    },
    queryArrays(text, values) {
      for (const listener of listeners) listener(text, values);
      return run(async () => (await client.query<unknown[]>({ ...arrayQuery(text, values), ...remaining(deadline) })).rows);
    },
  });

  /** Runs `work` on one pooled connection within the client's bound (src/db/client-bound.ts, `onClient`). */
  const onConnection = <T>(work: (connection: Queryable, configured: (config: pg.QueryConfig) => Promise<pg.QueryResult>, client: pg.PoolClient) => Promise<T>): Promise<T> =>
    onClient(start, (client, deadline, run) => work(clientQueryable(client, deadline, run), (config) => run(() => client.query({ ...config, ...remaining(deadline) })), client));

  // The server process of each connection, read once, for cancelling a metered statement that runs
  // past its request's database time. Through a pooler a connection's server process changes.
  const processes = new WeakMap<pg.PoolClient, number>();
  const cancellerOf = async (client: pg.PoolClient): Promise<(() => Promise<void>) | null> => {
    if (kind !== 'postgres' || pooled) return null;
    let pid = processes.get(client);
    if (pid === undefined) {
      pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      processes.set(client, pid);
    }
    const known = pid;
    return () => cancelOn(cancelFrom ?? pool, known);
  };

  const database: Database = {
    kind,
    connectionString,
    directConnectionString: kind === 'postgres' ? (options.directUrl ?? connectionString) : connectionString,
    get namedStatements() {
      return names !== null;
    },
    get pooler() {
      return pooled;
    },
    pool,
    query(text, values) {
      return onConnection((connection) => connection.query(text, values));
    },
    queryArrays(text, values) {
      return onConnection((connection) => connection.queryArrays(text, values));
    },
    queryConfig(config) {
      const values = (config.values ?? []) as unknown[];
      const named = names && config.name ? { name: config.name, text: config.text, values } : { text: config.text, values };
      return onConnection((_connection, configured) => {
        for (const listener of listeners) listener(config.text, values);
        return configured(named);
      });
    },
    withConnection(work) {
      return onConnection((connection) => work(connection));
    },
    metered(meter) {
      const bound = new TimeBound(meter);
      const timed = <T>(statement: (connection: Queryable) => Promise<T>) =>
        onConnection(async (connection, _configured, client) => bound.run(() => statement(connection), meter.allowance ? await cancellerOf(client) : null));
      return {
        query: (text, values) => timed((connection) => connection.query(text, values)),
        queryArrays: (text, values) => timed((connection) => connection.queryArrays(text, values)),
      };
    },
    async transaction(work) {
      const client = await pool.connect();
      const tx = clientQueryable(client, null);
      try {
        await client.query('BEGIN');
        const result = await work(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    onQuery(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
      await closeBackend();
    },
  };
  listenersOf.set(database, listeners);
  return database;
}
