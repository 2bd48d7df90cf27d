import pg from 'pg';
import { isDatabaseUnavailable } from '../errors.ts';

/**
 * A statement timeout no one configures, sent in the probe's startup packet only: reading it back
 * proves that the server itself received the connection's startup parameters.
 */
const PROBE_TIMEOUT_MS = 86_399_999;

/** What one connection tells about what sits between the service and PostgreSQL. */
export interface ServerProbe {
  /**
   * Whether the server received the connection's own startup parameters: a direct connection (or
   * a proxy that passes connections through whole). A pooler answers for the server and refuses
   * them (PgBouncer by default: `unsupported startup parameter`) or drops them
   * (`ignore_startup_parameters`); its server connections then serve other clients too, in
   * between the statements of one of ours.
   */
  readonly startupParameters: boolean;
  /**
   * The statement timeout a connection gets without startup parameters, in ms (0 is none); null
   * where the connection's own timeout applies and it was not read.
   */
  readonly serverStatementTimeoutMs: number | null;
}

const isRefusedStartupParameter = (error: unknown) => error instanceof Error && /unsupported startup parameter/i.test(error.message);

async function readTimeout(config: pg.ClientConfig): Promise<number> {
  const client = new pg.Client(config);
  client.on('error', () => {});
  await client.connect();
  try {
    const result = await client.query<{ setting: string }>("SELECT setting FROM pg_settings WHERE name = 'statement_timeout'");
    return Number(result.rows[0]?.setting ?? 0);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Opens one connection with a marker statement timeout among its startup parameters and reads the
 * timeout back: the marker means the server got them; a refusal or another value means a pooler
 * answered. Without them, the value read is what the role, the database or the server sets.
 */
export async function probeServer(config: pg.ClientConfig): Promise<ServerProbe> {
  try {
    const timeout = await readTimeout({ ...config, statement_timeout: PROBE_TIMEOUT_MS });
    if (timeout === PROBE_TIMEOUT_MS) return { startupParameters: true, serverStatementTimeoutMs: null };
    return { startupParameters: false, serverStatementTimeoutMs: timeout };
  } catch (error) {
    if (!isRefusedStartupParameter(error)) throw error;
    return { startupParameters: false, serverStatementTimeoutMs: await readTimeout(config) };
  }
}

/**
 * Refuses a start whose statements would run without the configured bound: through a pooler the
 * timeout cannot travel with the connection, so the role (or database) must set one, no longer.
 */
export function checkServerTimeout(probe: ServerProbe, statementTimeoutMs: number): void {
  if (probe.startupParameters) return;
  const found = probe.serverStatementTimeoutMs ?? 0;
  if (found > 0 && found <= statementTimeoutMs) return;
  throw new Error(
    `DATABASE_URL leads to a connection pooler, which does not pass the statement timeout on to PostgreSQL, and the role sets ` +
      `${found === 0 ? 'none' : `${found} ms, more than DB_STATEMENT_TIMEOUT_MS`}: run ` +
      `ALTER ROLE <the service's role> SET statement_timeout = ${statementTimeoutMs} on the server. A role setting reaches only server ` +
      `connections opened after it: then have the pooler replace the ones it holds (PgBouncer: RECONNECT on its admin console, or a restart) ` +
      `before starting again, or this refusal stays (docs/replicas-and-pooling.md)`,
  );
}

/** How a pool talks to its server: what the probe found, and the prepared-statements setting. */
export interface PoolTraits {
  /** Whether the statement timeout travels in each connection's startup parameters. */
  startupParameters: boolean;
  namedStatements: boolean;
  /** The traits to take once a first connection succeeds, when the server was unreachable at start. */
  later?: () => Promise<PoolTraits>;
}

/**
 * Probes the server of `url` and checks its statement timeout (see `checkServerTimeout`). When it
 * cannot be reached the service still starts (and answers 503 until it returns): until a first
 * connection succeeds the pool assumes a pooler, whose connections need neither startup
 * parameters nor statement names, and asks again then (`later`).
 */
export async function poolTraits(
  url: string,
  options: { connectionTimeoutMs?: number | undefined; statementTimeoutMs?: number | undefined; preparedStatements?: boolean | 'auto' | undefined },
): Promise<PoolTraits> {
  const config = { connectionString: url, connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000 };
  const traitsOf = (probe: Pick<ServerProbe, 'startupParameters'>): PoolTraits => ({
    startupParameters: probe.startupParameters,
    namedStatements: (options.preparedStatements ?? 'auto') === 'auto' ? probe.startupParameters : options.preparedStatements === true,
  });
  try {
    const probe = await probeServer(config);
    if (options.statementTimeoutMs) checkServerTimeout(probe, options.statementTimeoutMs);
    return traitsOf(probe);
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    return { ...traitsOf({ startupParameters: false }), later: () => probeServer(config).then(traitsOf) };
  }
}
