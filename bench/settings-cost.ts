/**
 * What one setting costs under load at M: pairs of facades that differ in that setting alone,
 * loaded like every other server of the run (bench/run.ts), taking turns, so that the ratio of the
 * pair comes from the same minutes of the shared machine.
 *
 * - Tracing: exporting every span over OTLP/HTTP (to bench/otlp-sink.ts) against no endpoint, where
 *   the SDK is never loaded (src/observability/tracing.ts).
 * - Prepared statements: `DATABASE_PREPARED_STATEMENTS=false` (what PgBouncer in transaction mode
 *   gets by detection) against the default on a direct connection, where the listing statements
 *   are prepared once per connection; with the cache off, so that every request runs them.
 */
import { ENDPOINTS, type Endpoint } from './database.ts';
import type { LoadRow } from './report.ts';
import type { FacadeName } from './servers.ts';

export interface SettingPair {
  /** What is compared, as the report names it. */
  setting: string;
  /** How the report names the variant and the base: `on` and `off`, say. */
  names: [variant: string, base: string];
  base: FacadeName;
  variant: FacadeName;
  endpoints: Endpoint[];
  /** Only where the database is a PostgreSQL server: embedded connections prepare nothing. */
  postgresOnly: boolean;
}

const [courses, bookings, withParticipants] = ENDPOINTS as [Endpoint, Endpoint, Endpoint];

export const SETTING_PAIRS: SettingPair[] = [
  { setting: 'tracing, cache hits', names: ['on', 'off'], base: 'hits', variant: 'traced', endpoints: [courses, withParticipants], postgresOnly: false },
  { setting: 'tracing, builds (cache off)', names: ['on', 'off'], base: 'off', variant: 'off-traced', endpoints: [bookings], postgresOnly: false },
  { setting: 'listing statements, builds (cache off)', names: ['unnamed', 'prepared'], base: 'off', variant: 'unprepared', endpoints: [courses, bookings, withParticipants], postgresOnly: true },
];

export interface SettingRow {
  pair: SettingPair;
  row: LoadRow;
}

/** The settings of a variant facade, beside the database's. */
export function variantEnv(name: FacadeName, serverEnv: Record<string, string>, otlpEndpoint: string): Record<string, string> {
  if (name === 'traced' || name === 'off-traced') return { ...serverEnv, OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint, OTEL_SERVICE_NAME: 'bench-facade' };
  if (name === 'unprepared') return { ...serverEnv, DATABASE_PREPARED_STATEMENTS: 'false' };
  return serverEnv;
}
