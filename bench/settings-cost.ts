/**
 * What one setting costs under load at M: pairs of facades that differ in that setting alone,
 * loaded like every other server of the pass, taking turns, so that the ratio of the pair comes
 * from the same minutes of the shared machine.
 *
 * - Tracing: exporting every span over OTLP/HTTP (to the receiver of bench/reference-servers.ts)
 *   against no endpoint, where the SDK is never loaded (src/observability/tracing.ts).
 * - Prepared statements: `DATABASE_PREPARED_STATEMENTS=false` (what PgBouncer in transaction mode
 *   gets by detection) against the default on a direct connection, where the listing statements
 *   are prepared once per connection; with the cache off, so that every request runs them.
 */
import { ENDPOINTS, type BenchDatabase, type Endpoint } from './database.ts';
import { wrkAvailable } from './load.ts';
import type { FacadeName, Generator, LoadRow, SettingRow, SettingsResults } from './results.ts';
import { startFacade, startOtlpSink, stop, type Served } from './servers.ts';

interface SettingPair {
  setting: string;
  names: [variant: string, base: string];
  base: FacadeName;
  variant: FacadeName;
  endpoints: Endpoint[];
  /** Only where the database is a PostgreSQL server: embedded connections prepare nothing. */
  postgresOnly: boolean;
}

const [courses, bookings, withParticipants] = ENDPOINTS as [Endpoint, Endpoint, Endpoint];

const SETTING_PAIRS: SettingPair[] = [
  { setting: 'tracing, cache hits', names: ['on', 'off'], base: 'hits', variant: 'traced', endpoints: [courses, withParticipants], postgresOnly: false },
  { setting: 'tracing, builds (cache off)', names: ['on', 'off'], base: 'off', variant: 'off-traced', endpoints: [bookings], postgresOnly: false },
  { setting: 'listing statements, builds (cache off)', names: ['unnamed', 'prepared'], base: 'off', variant: 'unprepared', endpoints: [courses, bookings, withParticipants], postgresOnly: true },
];

/** The settings of a variant facade, beside the database's. */
function variantEnv(name: FacadeName, serverEnv: Record<string, string>, otlpEndpoint: string): Record<string, string> {
  if (name === 'traced' || name === 'off-traced') return { ...serverEnv, OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint, OTEL_SERVICE_NAME: 'bench-facade' };
  if (name === 'unprepared') return { ...serverEnv, DATABASE_PREPARED_STATEMENTS: 'false' };
  return serverEnv;
}

/** Loads one row with the given servers, taking turns (the pass's own `loadRow`). */
export type RowLoader = (servers: Served[], endpoint: Endpoint, generator: Generator, pairs: Array<[FacadeName, FacadeName]>) => Promise<LoadRow>;

/** The pairs at M, each variant facade started for its rows alone. */
export async function measureSettings(database: BenchDatabase, loadRow: RowLoader, rounds: number, duration: number): Promise<SettingsResults> {
  const sink = await startOtlpSink();
  const rows: SettingRow[] = [];
  const skipped: string[] = [];
  const generator: Generator = wrkAvailable ? 'wrk' : 'autocannon';
  let tracedRequests = 0;
  try {
    for (const pair of SETTING_PAIRS) {
      if (pair.postgresOnly && database.kind !== 'PostgreSQL') {
        skipped.push(`${pair.setting}: the embedded database prepares no statements`);
        continue;
      }
      const servers = await Promise.all([pair.base, pair.variant].map((name) => startFacade(name, variantEnv(name, database.serverEnv, sink.url))));
      try {
        for (const endpoint of pair.endpoints) {
          const row = await loadRow(servers, endpoint, generator, [[pair.variant, pair.base]]);
          rows.push({ setting: pair.setting, names: pair.names, base: pair.base, variant: pair.variant, row });
          if (pair.variant === 'traced' || pair.variant === 'off-traced') tracedRequests += (row.results[pair.variant]?.rps ?? 0) * duration * rounds;
        }
      } finally {
        for (const server of servers) await stop(server.child);
      }
    }
    return { rows, skipped, exported: { ...(await sink.received()), requests: Math.round(tracedRequests) } };
  } finally {
    await stop(sink.child);
  }
}
