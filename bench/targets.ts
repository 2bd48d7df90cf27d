/**
 * The bench's targets, as data: what each promises, the numbers of a run it is judged on, and its
 * bound. The report reads them and says met or missed from the numbers alone.
 */
import { KEY_ACTIVITY_PART } from './hit-parts.ts';
import { latencyRatios, timePerPointSpread } from './report-internal.ts';
import { comparisonRatios } from './report-postgraphile.ts';
import { median, ratioOf, rowOf, type BenchResults, type GraphqlComparison, type LoadRow } from './results.ts';

export interface Measured {
  /** How the report shows the number (a ratio with its rounds' range, say). */
  shown: string;
  value: number;
}

export interface Target {
  text: string;
  /** The numbers it is judged on; none when this run did not measure them. */
  measure(results: BenchResults): Measured[];
  /** Each number must be at least `min`, at most `max` (below it, when `strict`). */
  min?: number;
  max?: number;
  strict?: boolean;
}

const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const range = (values: readonly number[]) => (values.length ? `${fixed(Math.min(...values), 2)}–${fixed(Math.max(...values), 2)}` : 'n/a');
const ratio = (row: LoadRow | undefined, pair: string, label = ''): Measured[] =>
  row ? [{ value: ratioOf(row, pair), shown: `${label}${fixed(ratioOf(row, pair), 2)}× (${range(row.ratios[pair] ?? [])})` }] : [];
const M = (results: BenchResults, endpoint: string, generator: 'wrk' | 'autocannon' = 'wrk') => rowOf(results, 'M', endpoint, generator);
/** The request log's rows with the log as it runs by default (bench/request-log-cost.ts), each endpoint's ratio `pair`. */
const requestLog = (results: BenchResults, pair: string) =>
  (results.requestLog ?? []).filter((setting) => setting.variant === 'hits').flatMap((setting) => ratio(setting.row, pair, `${setting.row.endpoint} `));
const ENDPOINTS = ['/courses', '/bookings', '/bookings + participants:read'];

/** Per query measured against PostGraphile, the median of the rounds' ratios (service / PostGraphile), with their range. */
const graphqlRatios = (comparison: GraphqlComparison | null | undefined, what: 'rps' | 'cpu'): Measured[] =>
  (comparison?.queries ?? [])
    .filter((query) => query.rounds.postgraphile)
    .map((query) => {
      const ratios = comparisonRatios(query, what);
      return { value: median(ratios), shown: `${query.name} ${fixed(median(ratios), 2)}× (${range(ratios)})` };
    });

/** The targets against PostGraphile v5 (bench/postgraphile.ts), on one comparison. */
export const GRAPHQL_TARGETS: Array<Omit<Target, 'measure'> & { measure(comparison: GraphqlComparison | null | undefined): Measured[] }> = [
  { text: "internal GraphQL Q1, Q2, Q3 ≥ 1.0 × PostGraphile v5's req/s (each server alone, same rounds)", measure: (comparison) => graphqlRatios(comparison, 'rps'), min: 1 },
  { text: "internal GraphQL Q1, Q2, Q3: Node plus PostgreSQL CPU per request ≤ 1.0 × PostGraphile v5's", measure: (comparison) => graphqlRatios(comparison, 'cpu'), max: 1 },
];

/** The targets against PostGraphile, judged on each Node.js's comparison, as lines. */
export function postgraphileTargets(passes: readonly GraphqlComparison[]): string[] {
  return passes.flatMap((pass) =>
    GRAPHQL_TARGETS.map((target) => {
      const measured = target.measure(pass);
      const met = verdict({ ...target, measure: () => measured }, measured);
      if (met === null) return `- Node ${pass.node}: ${target.text}: not measured${pass.skipped ? ` (${pass.skipped})` : ''}`;
      return `- Node ${pass.node}: ${target.text}: ${measured.map((entry) => entry.shown).join('; ')}: ${met ? 'met' : '**missed**'}`;
    }),
  );
}

export const TARGETS: Target[] = [
  ...GRAPHQL_TARGETS.map((target) => ({ ...target, measure: (results: BenchResults) => target.measure(results.postgraphile) })),
  {
    text: 'cached /bookings + participants:read at M ≥ 0.7 × express without middleware (wrk)',
    measure: (results) => ratio(M(results, '/bookings + participants:read'), 'hits/express'),
    min: 0.7,
  },
  {
    text: 'cached /bookings + participants:read at M ≥ 0.55 × bare node:http (wrk)',
    measure: (results) => ratio(M(results, '/bookings + participants:read'), 'hits/bare'),
    min: 0.55,
  },
  { text: 'cached /courses at M ≥ 0.7 × bare node:http (wrk)', measure: (results) => ratio(M(results, '/courses'), 'hits/bare'), min: 0.7 },
  {
    text: 'statements per cache hit under load at M ≤ 0.1, each endpoint and generator',
    measure: (results) =>
      results.rows
        .filter((row) => row.size === 'M' && row.results.hits)
        .map((row) => ({ value: row.results.hits!.statementsPerRequest, shown: `${row.endpoint} (${row.generator}) ${fixed(row.results.hits!.statementsPerRequest, 3)}` })),
    max: 0.1,
  },
  {
    text: 'statements of one cache hit with its key lookup ≤ 2 (S, M, L)',
    measure: (results) =>
      ENDPOINTS.flatMap((endpoint) => ['S', 'M', 'L'].map((size) => results.statements[`${size}|${endpoint}|hit`]))
        .filter((value): value is number => value !== undefined)
        .map((value) => ({ value, shown: String(value) })),
    max: 2,
  },
  {
    text: 'request log on (the default) against off: cached hits at M keep ≥ 0.95 × the req/s (each endpoint, same pass)',
    measure: (results) => requestLog(results, 'hits/unlogged'),
    min: 0.95,
  },
  {
    text: "request log on (the default) against off: cached hits' p99 at M ≤ 1.05 × (each endpoint, same pass)",
    measure: (results) => requestLog(results, 'p99:hits/unlogged'),
    max: 1.05,
  },
  {
    text: 'request log on (the default): the key’s allow list and activity take ≤ 5 % of a cached hit’s CPU at M (profiled under load, each endpoint)',
    measure: (results) =>
      (results.requestLogProfiles ?? (results.hitProfile ? [results.hitProfile] : [])).map((profile) => {
        const part = profile.parts.find((entry) => entry.part === KEY_ACTIVITY_PART);
        const share = part?.share ?? 0;
        return { value: share * 100, shown: `${profile.endpoint} ${fixed(share * 100, 1)} % (${fixed(part?.us ?? 0, 2)} µs of ${fixed(profile.cpuUs, 1)} µs)` };
      }),
    max: 5,
  },
  {
    text: 'cache misses ≤ 1.10 × the build without the cache (M, one at a time)',
    measure: (results) => Object.entries(results.misses).map(([endpoint, miss]) => ({ value: miss.ratio, shown: `${endpoint} ${fixed(miss.ratio, 2)}×` })),
    max: 1.1,
  },
  {
    text: 'builds (cache off) at M ≥ 0.9 × the hand-written baseline',
    measure: (results) => ENDPOINTS.flatMap((endpoint) => ratio(M(results, endpoint, 'autocannon'), 'off/baseline', `${endpoint} `)),
    min: 0.9,
  },
  {
    text: 'facade peak RSS under load at S and M < 300 MB (cache hits, cache off)',
    measure: (results) => (['hits', 'off'] as const).flatMap((name) => (results.rssAfterM[name] === undefined ? [] : [{ value: results.rssAfterM[name]!, shown: `${name} ${fixed(results.rssAfterM[name]!, 0)} MB` }])),
    max: 300,
    strict: true,
  },
  {
    text: 'facade peak RSS at L < 300 MB (cache hits, cache off)',
    measure: (results) => (['hits', 'off'] as const).flatMap((name) => (results.rssAtL[name] === undefined ? [] : [{ value: results.rssAtL[name]!, shown: `${name} ${fixed(results.rssAtL[name]!, 0)} MB` }])),
    max: 300,
    strict: true,
  },
  {
    text: 'writes: 1,000 bookings by 10 writers with the data-version triggers ≤ 1.25 × without',
    measure: (results) =>
      results.writes.map((variant) => {
        const value = median(variant.withTriggers) / median(variant.withoutTriggers);
        return { value, shown: `${variant.name}: ${fixed(value, 2)}×` };
      }),
    max: 1.25,
  },
  {
    text: "webhooks: p99 from a booking's commit to the receiver's answer ≤ 1 s for single changes after idle, every event answered",
    measure: (results) =>
      (results.webhooks?.runs ?? []).map((run) => ({
        value: run.idle.lost > 0 ? Number.POSITIVE_INFINITY : run.idle.p99 / 1000,
        shown: `${run.database} ${fixed(run.idle.p99, 0)} ms${run.idle.lost > 0 ? ` (${run.idle.lost} not answered)` : ''}`,
      })),
    max: 1,
  },
  {
    text: "webhooks: a workspace's p99 from commit to its receiver beside 1 and beside 10 workspaces with hanging receivers (60 bookings each) ≤ 2 s, every event answered (PostgreSQL)",
    measure: (results) =>
      (results.webhookIsolation?.noisy ?? []).map((run) => ({
        value: run.answered < run.expected ? Number.POSITIVE_INFINITY : run.p99 / 1000,
        shown: `beside ${run.hanging}: ${fixed(run.p99, 0)} ms${run.answered < run.expected ? ` (${run.expected - run.answered} not answered)` : ''}`,
      })),
    max: 2,
  },
  {
    text: 'webhooks: deliveries per second of a burst (10,000 bookings across 100 endpoints) ≥ 0.5 × a bare keep-alive HTTPS client with the same concurrency, same run (PostgreSQL)',
    measure: (results) => {
      const throughput = results.webhookIsolation?.throughput;
      if (!throughput?.worker.length) return [];
      const ratios = throughput.worker.map((worker, i) => worker / throughput.bare[i]!);
      return [{ value: median(ratios), shown: `${fixed(median(ratios), 2)}× (${range(ratios)}; ${fixed(median(throughput.worker), 0)}/s against ${fixed(median(throughput.bare), 0)}/s)` }];
    },
    min: 0.5,
  },
  {
    text: 'public /courses and /bookings beside an internal token running its costliest requests: p50 ≤ 1.5 × alone (PostgreSQL)',
    measure: (results) =>
      results.internalLoad
        ? ['/courses', '/bookings'].map((endpoint) => {
            const ratios = latencyRatios(results.internalLoad!, endpoint, 'p50');
            return { value: median(ratios), shown: `${endpoint} ${fixed(median(ratios), 2)}× (${range(ratios)})` };
          })
        : [],
    max: 1.5,
  },
  {
    text: 'public /courses and /bookings beside an internal token running its costliest requests: p99 ≤ 2 × alone (PostgreSQL)',
    measure: (results) =>
      results.internalLoad
        ? ['/courses', '/bookings'].map((endpoint) => {
            const ratios = latencyRatios(results.internalLoad!, endpoint, 'p99');
            return { value: median(ratios), shown: `${endpoint} ${fixed(median(ratios), 2)}× (${range(ratios)})` };
          })
        : [],
    max: 2,
  },
  {
    text: 'database time per cost point: costliest shape ≤ 10 × the cheapest (PostgreSQL)',
    measure: (results) => (results.internalLoad ? [{ value: timePerPointSpread(results.internalLoad), shown: `${fixed(timePerPointSpread(results.internalLoad), 1)}×` }] : []),
    max: 10,
  },
  {
    text: "a newcomer's `npm start` on an empty data directory answers its first 200 within 2 s",
    measure: (results) =>
      results.firstAnswers.length ? [{ value: median(results.firstAnswers) / 1000, shown: `${fixed(median(results.firstAnswers) / 1000, 2)} s (median of ${results.firstAnswers.map((ms) => fixed(ms / 1000, 2)).join(', ')})` }] : [],
    max: 2,
  },
];

/** Met when every number keeps the bound; null when the run measured none of them. */
export function verdict(target: Target, measured: readonly Measured[]): boolean | null {
  if (measured.length === 0) return null;
  return measured.every(({ value }) => {
    if (!Number.isFinite(value)) return false;
    if (target.min !== undefined && value < target.min) return false;
    if (target.max !== undefined && (target.strict ? value >= target.max : value > target.max)) return false;
    return true;
  });
}
