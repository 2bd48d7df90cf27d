/**
 * The bench's one results model: what a pass measured, as plain data. A pass writes it as JSON
 * (`--results`), the report reads it (bench/report.ts), the targets judge it (bench/targets.ts).
 */
import type { QueryName } from './graphql-queries.ts';

export type ServerName = 'bare' | 'express' | 'hits' | 'off' | 'baseline' | 'traced' | 'off-traced' | 'unprepared' | 'unlogged' | 'logged-all';
/** The facades: cache hits or builds, and the variants of one setting each that bench/settings-cost.ts compares. */
export type FacadeName = Extract<ServerName, 'hits' | 'off' | 'traced' | 'off-traced' | 'unprepared' | 'unlogged' | 'logged-all'>;
export type Generator = 'autocannon' | 'wrk';

/** How the report names each server. */
export const LABEL: Record<ServerName, string> = {
  bare: 'bare node:http',
  express: 'express, no middleware',
  hits: 'facade, cache hits',
  off: 'facade, cache off',
  baseline: 'baseline',
  traced: 'facade, cache hits, tracing on',
  'off-traced': 'facade, cache off, tracing on',
  unprepared: 'facade, cache off, no prepared statements',
  unlogged: 'facade, cache hits, request log off',
  'logged-all': 'facade, cache hits, every request logged',
};

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  statementsPerRequest: number;
  /** Server CPU (user + system) per request, ms. */
  cpuMs: number;
  errors: number;
}

/** One size and endpoint under load with one generator: each server's medians, and each round's ratios by `a/b` (requests per second), `cpu:a/b` and `p99:a/b`. */
export interface LoadRow {
  size: string;
  endpoint: string;
  generator: Generator;
  bytes: number;
  results: Partial<Record<ServerName, LoadResult>>;
  ratios: Record<string, number[]>;
}

export interface MissResult {
  /** Median time of one request, facade with the cache on (every request a miss) and off. */
  missMs: number;
  offMs: number;
  /** Median of the pairs' miss / off ratios. */
  ratio: number;
  missCpuMs: number;
  offCpuMs: number;
  missStatements: number;
  offStatements: number;
  /** Misses /metrics counted, of the requests sent. */
  misses: number;
  requests: number;
}

export interface WriteVariant {
  name: string;
  /** Milliseconds per round for all 1,000 bookings. */
  withTriggers: number[];
  withoutTriggers: number[];
}

/** Two facades that differ in one setting (bench/settings-cost.ts), and what their load measured. */
export interface SettingRow {
  setting: string;
  /** How the report names the variant and the base: `on` and `off`, say. */
  names: [variant: string, base: string];
  base: FacadeName;
  variant: FacadeName;
  row: LoadRow;
}

export interface SettingsResults {
  rows: SettingRow[];
  /** What the OTLP receiver took in while the traced facades were loaded. */
  exported: { exports: number; bytes: number; requests: number };
  /** Why a pair did not run, if one did not. */
  skipped: string[];
}

/** One part of a cache hit's CPU time, from a profile of hits under load (bench/hit-parts.ts). */
export interface HitPart {
  part: string;
  /** Its share of the facade's busy samples, and that share of the CPU per hit, µs. */
  share: number;
  us: number;
  /** What the part was taken down to, or why it stays above its floor. */
  floor: string;
}

export interface HitProfile {
  endpoint: string;
  generator: Generator;
  rps: number;
  cpuUs: number;
  parts: HitPart[];
}

export interface LatencyFigures {
  samples: number;
  /** Events not answered within the wait. */
  lost: number;
  p50: number;
  p99: number;
  max: number;
}

export interface StatementCount {
  total: number;
  /** By kind: the statement sent, the data version, the webhook triggers, foreign-key checks, the workers' wake-up. */
  kinds: Record<string, number>;
}

export interface WebhookLatencyRun {
  database: string;
  burst: LatencyFigures & { seconds: number };
  idle: LatencyFigures;
  /** One booking update in one transaction; null where auto_explain cannot be loaded (the embedded database). */
  statements: { without: StatementCount; with: StatementCount } | null;
}

/** Tenants beside hanging receivers, and throughput against a bare client (bench/webhook-isolation.ts). */
export interface WebhookIsolationResults {
  /** B's latency (ms) beside each number of hanging tenants. */
  noisy: Array<{ hanging: number; p50: number; p99: number; max: number; answered: number; expected: number }>;
  /**
   * Deliveries per second of each round: through the worker from the burst's commit, and of the
   * bare client; through the worker from the burst's first write, and how long the writing took.
   */
  throughput: { worker: number[]; bare: number[]; fromFirstWrite: number[]; writeSeconds: number[]; concurrency: number };
  skipped: string | null;
}

export interface WebhookLatencyResults {
  runs: WebhookLatencyRun[];
  skipped: string[];
}

/** Public latency of one endpoint in one round, alone and beside the internal token's loops (bench/internal-load.ts). */
export interface LatencyRound {
  endpoint: string;
  alone: { p50: number; p99: number; requests: number };
  beside: { p50: number; p99: number; requests: number };
}

/** Database time of one shape of internal query against the points it was charged. */
export interface InternalShape {
  name: string;
  requests: number;
  points: number;
  /** PostgreSQL's `active_time` of the bench database over the requests. */
  databaseMs: number;
  /** The same over as long a wait with nothing sent. */
  idleMs: number;
  secondsPer100k: number;
}

export interface InternalLoadResults {
  /** How many aliased counts the costliest accepted request holds. */
  costliest: number;
  loops: number;
  publicConnections: number;
  duration: number;
  rounds: LatencyRound[];
  /** What the internal loops were answered, by status, over every round. */
  internalStatuses: Record<string, number>;
  shapes: InternalShape[];
}

export interface BenchResults {
  /** `v24.21.0`. */
  node: string;
  machine: string;
  database: string;
  loadAverage: { start: string; end: string };
  rounds: number;
  duration: number;
  warmup: number;
  connections: number;
  /** The load phases at S and M (autocannon, then wrk at M). */
  rows: LoadRow[];
  rssAfterM: Partial<Record<ServerName, number>>;
  /** Only a full pass has what follows: a load-only pass (the one beside) leaves them empty. */
  loadOnly: boolean;
  misses: Record<string, MissResult>;
  /** By `size|endpoint|kind`. */
  statements: Record<string, number>;
  /** By `size|endpoint|server`, milliseconds. */
  sequential: Record<string, number>;
  lRows: LoadRow[];
  rssAtL: Partial<Record<ServerName, number>>;
  writes: WriteVariant[];
  /** Webhook latency (bench/webhook-latency.ts); absent from the load-only pass. */
  webhooks?: WebhookLatencyResults;
  /** Tenants beside hanging receivers and throughput (bench/webhook-isolation.ts); absent from passes before it. */
  webhookIsolation?: WebhookIsolationResults;
  firstAnswers: number[];
  /** Internal GraphQL beside the public API (PostgreSQL only); absent from the load-only pass. */
  internalLoad?: InternalLoadResults | null;
  settings: SettingsResults | null;
  /** The API keys' request log on against off, cache hits at M (bench/request-log-cost.ts); every pass, the one beside too. */
  requestLog?: SettingRow[];
  /** Cache hits profiled under load with the request log on, each endpoint (bench/hit-parts.ts): the log's share of a hit's CPU. */
  requestLogProfiles?: HitProfile[];
  /** Where the request log's servers and wrk ran (bench/cpus.ts). */
  requestLogPlacement?: string;
  hitProfile: HitProfile | null;
  /** Internal GraphQL against PostGraphile v5 (bench/postgraphile.ts; PostgreSQL only, PostGraphile on Node ≥ 22). */
  postgraphile?: GraphqlComparison | null;
  checks: string[];
}

/** Internal GraphQL against PostGraphile v5 (bench/postgraphile.ts). */
export type GraphqlServerName = 'service' | 'postgraphile';

export interface GraphqlRound {
  rps: number;
  p50: number;
  p99: number;
  /** The server process's CPU per request, ms. */
  nodeCpuMs: number;
  /** The bench database's PostgreSQL backends' CPU per request, ms. */
  pgCpuMs: number;
  errors: number;
}

export interface GraphqlComparison {
  /** `v24.11.0`. */
  node: string;
  /** Why PostGraphile was not measured, when it was not. */
  skipped: string | null;
  postgraphileVersion: string | null;
  /** The checkout whose build was measured as the service, when not this one. */
  serviceBuild?: string;
  connections: number;
  duration: number;
  warmup: number;
  rounds: number;
  queries: Array<{ name: QueryName; what: string; rounds: Partial<Record<GraphqlServerName, GraphqlRound[]>> }>;
  checks: string[];
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The median of a row's rounds' ratios `pair` (`hits/express`), NaN without them. */
export const ratioOf = (row: LoadRow | undefined, pair: string) => median(row?.ratios[pair] ?? []);

/** The row of a size, endpoint and generator. */
export const rowOf = (results: BenchResults, size: string, endpoint: string, generator: Generator) =>
  [...results.rows, ...results.lRows].find((row) => row.size === size && row.endpoint === endpoint && row.generator === generator);
