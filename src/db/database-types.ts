/** The handles the database layer hands out: the pool (`Database`), a connection or transaction (`Queryable`), and how they are opened. */
import type pg from 'pg';

export type DatabaseKind = 'embedded' | 'postgres';

export interface QueryListener {
  /** A statement as sent, with its parameters (which a listener must not log: they may hold personal data). */
  (text: string, values?: readonly unknown[]): void;
}

/**
 * What every statement-running handle offers: the pool, one checked-out connection
 * (`withConnection`) and a transaction. Stores take this, so they run the same inside and outside
 * a transaction.
 */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: readonly unknown[]): Promise<pg.QueryResult<R>>;
  /**
   * `query` with each row as an array of its column values, in the statement's column order. On
   * PostgreSQL the statement is prepared once per connection and executed by name after that.
   */
  queryArrays(text: string, values: readonly unknown[]): Promise<unknown[][]>;
}

/**
 * The database time a request's statements may take together, given in parts: when what is
 * allowed is spent, `more` is asked for another part (statements go on running meanwhile); when it
 * gives none, the statements running are cancelled on PostgreSQL (not through a pooler, nor on the
 * embedded database, which cannot cancel one) and no other starts: they fail with
 * `DatabaseTimeSpent`, carrying `stoppedBecause`.
 */
export interface TimeAllowance {
  /** Milliseconds allowed so far. */
  ms: number;
  /** Milliseconds more, or 0 when there are no more (`stoppedBecause` then says why). */
  more(): Promise<number>;
  readonly stoppedBecause: string;
}

/** What a request's statements cost the database, as `Database.metered` adds it up. */
export interface StatementMeter {
  statements: number;
  /** Milliseconds from sending each statement on its connection to its last row (the wait for a connection left out). */
  ms: number;
  /** What they may take; unbounded when absent. */
  allowance?: TimeAllowance | undefined;
}

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /** A connection string other pg clients can use (through the same pooler, if any). */
  readonly connectionString: string;
  /**
   * Where session work goes: migrations (an advisory lock) and the webhook workers' wake-ups
   * (LISTEN), which a pooler in transaction mode cannot carry. `DATABASE_DIRECT_URL`, else the same.
   */
  readonly directConnectionString: string;
  /** Whether `queryArrays` and `queryConfig` prepare their statements by name. */
  readonly namedStatements: boolean;
  /** Whether a pooler answers at `connectionString` instead of PostgreSQL itself (`probeServer`). */
  readonly pooler: boolean;
  readonly pool: pg.Pool;
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: readonly unknown[],
  ): Promise<pg.QueryResult<R>>;
  /**
   * A statement in pg's configuration form, for libraries that name their prepared statements
   * (the rate-limit store); observed like every other statement. On the embedded database it
   * goes unnamed: every connection shares one PGlite session, where names would collide.
   */
  queryConfig<R extends pg.QueryResultRow = pg.QueryResultRow>(config: { name?: string; text: string; values?: readonly unknown[] }): Promise<pg.QueryResult<R>>;
  /**
   * Runs `work` with every statement on one pooled connection, taken once: a request then waits
   * for a connection once, not before each of its statements, and holds no half-done work while
   * other requests take turns (not a transaction).
   */
  withConnection<T>(work: (connection: Queryable) => Promise<T>): Promise<T>;
  /** `query` and `queryArrays` of the pool, each statement's time on its connection added to `meter`, within its `allowance`. */
  metered(meter: StatementMeter): Queryable;
  /** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Observes every statement sent through `query`; returns the unsubscribe function. */
  onQuery(listener: QueryListener): () => void;
  /**
   * The embedded database this process opened, as a PGlite data directory dump that
   * `initialData` starts another one from; absent on PostgreSQL and on another process's socket.
   */
  dumpData?: () => Promise<Blob>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** A PostgreSQL connection string; without it an embedded PostgreSQL (PGlite) is used. */
  url?: string | undefined;
  /** PostgreSQL without a pooler in between, for session work; `url` when absent. */
  directUrl?: string | undefined;
  /**
   * Named prepared statements: `auto` uses them when the connection reaches PostgreSQL itself and
   * not a pooler (`probeServer`); never on the embedded database.
   */
  preparedStatements?: boolean | 'auto' | undefined;
  /** Where the embedded database keeps its files; `memory://` keeps it in memory. */
  dataDir?: string | undefined;
  /** Let other processes reach this process's embedded database through its socket. */
  shareEmbedded?: boolean | undefined;
  /**
   * A new embedded database starts as this PGlite data directory dump (`dumpDataDir`) instead of
   * an empty cluster: loading one is several times faster than PostgreSQL's initdb.
   */
  initialData?: Blob | undefined;
  poolSize?: number | undefined;
  /**
   * Upper bound for one statement, so that a stuck database never hangs a request: on the server
   * (`statement_timeout`) and, a little later, on the client, where it bounds the wait for a
   * connection and the statements on it together (`clientBoundMs`).
   */
  statementTimeoutMs?: number | undefined;
  connectionTimeoutMs?: number | undefined;
  applicationName?: string | undefined;
}

/** How a pool beside another one (`openPoolBeside`) is sized and bounded. */
export type PoolShare = Pick<DatabaseOptions, 'poolSize' | 'statementTimeoutMs' | 'applicationName' | 'preparedStatements'>;
