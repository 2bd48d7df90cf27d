import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { isDatabaseUnavailable } from '../errors.ts';
import { keepMessageGroupsTogether } from './pglite-message-groups.ts';
import { acquireLock, publishConnection, readLiveLock, releaseLock } from './embedded-lock.ts';

// timestamptz and timestamp arrive as Date; int8 counts as numbers (they stay far below 2^53).
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export type DatabaseKind = 'embedded' | 'postgres';

export interface QueryListener {
  (text: string): void;
}

/** What reading through one connection offers: a subset of `Database`. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: readonly unknown[]): Promise<pg.QueryResult<R>>;
  /**
   * `query` with each row as an array of its column values, in the statement's column order. On
   * PostgreSQL the statement is prepared once per connection and executed by name after that.
   */
  queryArrays(text: string, values: readonly unknown[]): Promise<unknown[][]>;
}

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /** A connection string other pg clients (migrations, the job queue) can use. */
  readonly connectionString: string;
  readonly pool: pg.Pool;
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: readonly unknown[],
  ): Promise<pg.QueryResult<R>>;
  /**
   * Runs `work` with every statement on one pooled connection, taken once: a request then waits
   * for a connection once, not before each of its statements, and holds no half-done work while
   * other requests take turns (not a transaction).
   */
  withConnection<T>(work: (connection: Queryable) => Promise<T>): Promise<T>;
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Observes every statement sent through `query`; returns the unsubscribe function. */
  onQuery(listener: QueryListener): () => void;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** A PostgreSQL connection string; without it an embedded PostgreSQL (PGlite) is used. */
  url?: string | undefined;
  /** Where the embedded database keeps its files; `memory://` keeps it in memory. */
  dataDir?: string | undefined;
  /** Let other processes reach this process's embedded database through its socket. */
  shareEmbedded?: boolean | undefined;
  poolSize?: number | undefined;
  /** Upper bound for one statement, so that a stuck database never hangs a request. */
  statementTimeoutMs?: number | undefined;
  connectionTimeoutMs?: number | undefined;
  applicationName?: string | undefined;
}

const DEFAULT_POOL_SIZE = 10;

/**
 * How many distinct statements one process prepares by name. The data layer's statements are
 * generated from the registry, one per selection shape, so a process meets a bounded set of them;
 * past this bound (many ad hoc internal GraphQL selections) statements are sent unnamed again,
 * so that no connection keeps an ever-growing set of prepared statements.
 */
const MAX_NAMED_STATEMENTS = 500;

/**
 * Names for the statements of `queryArrays`. A named statement is parsed and planned once per
 * connection (PostgreSQL then settles on a generic plan), where an unnamed one is parsed and
 * planned on every execution: for the listing statements that is most of the database's work.
 */
class StatementNames {
  readonly #names = new Map<string, string>();

  nameOf(text: string): string | undefined {
    let name = this.#names.get(text);
    if (name === undefined && this.#names.size < MAX_NAMED_STATEMENTS) {
      name = `svc_${this.#names.size + 1}`;
      this.#names.set(text, name);
    }
    return name;
  }
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.url) {
    return wrapPool('postgres', options.url, options, async () => {});
  }
  return openEmbedded(options);
}

async function openEmbedded(options: DatabaseOptions): Promise<Database> {
  const dataDir = options.dataDir ?? 'memory://';
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) {
    await mkdir(dataDir, { recursive: true });
    const holder = await readLiveLock(dataDir);
    if (holder?.connectionString) {
      // Another process (the server) has these files open: use its socket.
      return wrapPool('embedded', holder.connectionString, { ...options, poolSize: 2 }, async () => {});
    }
    await acquireLock(dataDir);
  }
  let pglite: PGlite;
  let PGLiteSocketServer: typeof import('@electric-sql/pglite-socket').PGLiteSocketServer;
  try {
    // Loaded only here: importing PGlite costs a process some 40 MB it never needs on PostgreSQL.
    const [embedded, socket] = await Promise.all([import('@electric-sql/pglite'), import('@electric-sql/pglite-socket')]);
    PGLiteSocketServer = socket.PGLiteSocketServer;
    pglite = await embedded.PGlite.create(inMemory ? dataDir : join(dataDir, 'pgdata'));
  } catch (error) {
    if (!inMemory) await releaseLock(dataDir);
    throw error;
  }
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  // One PGlite backend, many pg connections: the socket server queues their statements and keeps
  // a transaction's statements together, so one pg.Pool code path serves both database kinds.
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0, maxConnections: poolSize + 8 });
  keepMessageGroupsTogether(server);
  await server.start();
  const connectionString = `postgresql://postgres@${server.getServerConn()}/postgres?sslmode=disable`;
  if (!inMemory && options.shareEmbedded) await publishConnection(dataDir, connectionString);
  return wrapPool('embedded', connectionString, { ...options, poolSize }, async () => {
    await server.stop();
    await pglite.close();
    if (!inMemory) await releaseLock(dataDir);
  });
}

async function wrapPool(
  kind: DatabaseKind,
  connectionString: string,
  options: DatabaseOptions,
  closeBackend: () => Promise<void>,
): Promise<Database> {
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    application_name: options.applicationName ?? 'course-booking-api',
    ...(kind === 'postgres' && options.statementTimeoutMs
      ? { statement_timeout: options.statementTimeoutMs, query_timeout: options.statementTimeoutMs + 1_000 }
      : {}),
  });
  // An idle client losing its connection (database restart) must not crash the process;
  // the pool drops it and the next checkout connects again.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const listeners = new Set<QueryListener>();
  let closed = false;
  // Every connection to the embedded database shares one PGlite session, where two connections'
  // statements of the same name would collide: there statements stay unnamed.
  const names = kind === 'postgres' ? new StatementNames() : null;
  const arrayQuery = (text: string, values: readonly unknown[]): pg.QueryArrayConfig => ({
    name: names?.nameOf(text),
    text,
    values: values as unknown[],
    rowMode: 'array',
  });

  const database: Database = {
    kind,
    connectionString,
    pool,
    query(text, values) {
      for (const listener of listeners) listener(text);
      return pool.query(text, values as unknown[] | undefined);
    },
    async queryArrays(text, values) {
      for (const listener of listeners) listener(text);
      const result = await pool.query<unknown[]>(arrayQuery(text, values));
      return result.rows;
    },
    async withConnection(work) {
      const client = await pool.connect();
      let broken: unknown;
      let pending = 0;
      // A connection lost while checked out is reported here; the statement's own promise fails too.
      const onError = (error: unknown) => (broken = error);
      client.on('error', onError);
      const run = async <T>(statement: () => Promise<T>): Promise<T> => {
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
      const connection: Queryable = {
        query(text, values) {
          for (const listener of listeners) listener(text);
          return run(() => client.query(text, values as unknown[] | undefined));
        },
        queryArrays(text, values) {
          for (const listener of listeners) listener(text);
          return run(async () => (await client.query<unknown[]>(arrayQuery(text, values))).rows);
        },
      };
      try {
        return await work(connection);
      } finally {
        client.off('error', onError);
        // A broken connection, or one with statements still queued, is not handed to anyone else.
        client.release(broken instanceof Error ? broken : pending > 0 ? new Error('released with statements in flight') : undefined);
      }
    },
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(client);
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
  return database;
}
