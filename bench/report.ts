/** docs/benchmarks.md from one run's results: this run's numbers only. */
import { DEFAULT_RESPONSE_CACHE_MAX_BYTES } from '../src/config.ts';
import { ENDPOINTS } from './database.ts';
import { CONNECTIONS, DURATION, WARMUP, median, type Generator, type LoadResult } from './load.ts';
import { LABEL, type ServerName } from './servers.ts';
import { KEY_CACHE_TTL_MS, MISSES, type MissResult } from './single-requests.ts';
import type { WriteVariant } from './write-cost.ts';
import { webhookLatencySection, webhookLatencyTargets } from './report-webhooks.ts';
import type { WebhookLatencyResults } from './webhook-latency.ts';
import { nodeVersionsSection } from './report-node-versions.ts';
import { settingsSection, type SettingsResults } from './report-settings.ts';
import { gapSection } from './report-gap.ts';
import { range, ratioCell, round, table } from './format.ts';

export const PAIRS: Array<[ServerName, ServerName]> = [
  ['hits', 'bare'],
  ['hits', 'express'],
  ['express', 'bare'],
  ['off', 'bare'],
  ['off', 'baseline'],
  ['hits', 'off'],
];
export const STATEMENT_KINDS = ['hit', 'miss', 'off', 'baseline'] as const;

/** One size and endpoint under load with one generator. */
export interface LoadRow {
  size: string;
  endpoint: string;
  generator: Generator;
  bytes: number;
  results: Partial<Record<ServerName, LoadResult>>;
  /** Per round, by `a/b`. */
  ratios: Record<string, number[]>;
}

export interface BenchResults {
  machine: string;
  loadAverage: { start: string; end: string };
  rounds: number;
  rows: LoadRow[];
  rssAfterM: Partial<Record<ServerName, number>>;
  misses: Map<string, MissResult>;
  /** By `size|endpoint|kind`. */
  statements: Map<string, number>;
  /** By `size|endpoint|server`, milliseconds. */
  sequential: Map<string, number>;
  lRows: LoadRow[];
  rssAtL: Partial<Record<ServerName, number>>;
  writes: WriteVariant[];
  webhooks: WebhookLatencyResults;
  /** The median of `firstAnswers`. */
  firstAnswerMs: number;
  firstAnswers: number[];
  settings: SettingsResults;
  checks: string[];
}

const bytesCell = (bytes: number) => (bytes < 10_240 ? `${bytes} B` : `${round(bytes / 1024, 0)} KB`);
const verdict = (met: boolean) => (met ? 'met' : '**missed**');

function targets(results: BenchResults): string[][] {
  const rowsOf = (size: string, generator: Generator = 'autocannon') => results.rows.filter((row) => row.size === size && row.generator === generator);
  const ratio = (row: LoadRow, pair: string) => median(row.ratios[pair] ?? [Number.NaN]);
  const each = (size: string, pair: string, bound: number, generator: Generator = 'autocannon') => {
    const rows = rowsOf(size, generator);
    return [rows.map((row) => `${row.endpoint} ${round(ratio(row, pair), 2)}× (${range(row.ratios[pair])})`).join('; '), verdict(rows.length > 0 && rows.every((row) => ratio(row, pair) >= bound))];
  };
  const hitsUnderLoad = rowsOf('M').map((row) => row.results.hits?.statementsPerRequest ?? Number.NaN);
  const statementsOfOne = ENDPOINTS.flatMap((endpoint) => ['S', 'M', 'L'].map((size) => results.statements.get(`${size}|${endpoint.label}|hit`) ?? Number.NaN));
  const missRatios = ENDPOINTS.map((endpoint) => results.misses.get(endpoint.label)?.ratio ?? Number.NaN);
  const writeRatios = results.writes.map((variant) => median(variant.withTriggers) / median(variant.withoutTriggers));
  const offBaseline = rowsOf('M').map((row) => ratio(row, 'off/baseline'));
  const rows: string[][] = [
    ['cache hits at M ≥ 0.5 × bare, each endpoint', ...each('M', 'hits/bare', 0.5)],
    ['cache hits at S ≥ 0.3 × bare, each endpoint', ...each('S', 'hits/bare', 0.3)],
    ['cache hits at M ≥ 0.9 × express without middleware, each endpoint', ...each('M', 'hits/express', 0.9)],
    ['cache hits at S ≥ 0.9 × express without middleware, each endpoint', ...each('S', 'hits/express', 0.9)],
  ];
  if (results.rows.some((row) => row.generator === 'wrk')) {
    rows.push(['the same at M with wrk as the load generator: hits ≥ 0.5 × bare', ...each('M', 'hits/bare', 0.5, 'wrk')]);
    rows.push(['the same at M with wrk as the load generator: hits ≥ 0.9 × express', ...each('M', 'hits/express', 0.9, 'wrk')]);
  }
  rows.push(
    ['statements per cache hit under load at M ≤ 0.05', hitsUnderLoad.map((value) => round(value, 3)).join(' · '), verdict(hitsUnderLoad.every((value) => value <= 0.05))],
    ['statements of one cache hit with its key lookup ≤ 2 (S, M, L)', [...new Set(statementsOfOne)].join(', '), verdict(statementsOfOne.every((value) => value <= 2))],
    ['cache misses ≤ 1.10 × the build without the cache (M, one at a time)', ENDPOINTS.map((endpoint, i) => `${endpoint.label} ${round(missRatios[i], 2)}×`).join(', '), verdict(missRatios.every((value) => value <= 1.1))],
    ['builds (cache off) at M ≥ 0.9 × the hand-written baseline', offBaseline.map((value) => `${round(value, 2)}×`).join(' · '), verdict(offBaseline.every((value) => value >= 0.9))],
    ['facade peak RSS under load at S and M < 300 MB', `${round(results.rssAfterM.hits, 0)} MB (cache off ${round(results.rssAfterM.off, 0)} MB)`, verdict((results.rssAfterM.hits ?? 0) < 300 && (results.rssAfterM.off ?? 0) < 300)],
    ['facade peak RSS at L < 300 MB', `${round(results.rssAtL.hits, 0)} MB (cache off ${round(results.rssAtL.off, 0)} MB)`, verdict((results.rssAtL.hits ?? 0) < 300 && (results.rssAtL.off ?? 0) < 300)],
    ['writes: 1,000 bookings by 10 writers with the data-version triggers ≤ 1.25 × without', results.writes.map((variant, i) => `${variant.name}: ${round(writeRatios[i], 2)}×`).join('; '), verdict(writeRatios.every((value) => value <= 1.25))],
    ...webhookLatencyTargets(results.webhooks),
    ['a newcomer\'s `npm start` on an empty data directory answers its first 200 within 3 s', `${round(results.firstAnswerMs / 1000, 2)} s (median of ${results.firstAnswers.map((ms) => round(ms / 1000, 2)).join(', ')})`, verdict(results.firstAnswerMs <= 3000)],
  );
  return rows;
}

function loadTables(rows: LoadRow[], servers: ServerName[]): string[] {
  const throughput = table(
    ['size', 'endpoint', 'generator', 'body', ...servers.map((name) => `${LABEL[name]} req/s`), ...PAIRS.map(([a, b]) => `${a} / ${b}`)],
    rows.map((row) => [row.size, row.endpoint, row.generator, bytesCell(row.bytes), ...servers.map((name) => round(row.results[name]?.rps, 0)), ...PAIRS.map(([a, b]) => ratioCell(row.ratios[`${a}/${b}`]))]),
  );
  const detail = table(
    ['size', 'endpoint', 'generator', 'server', 'p50 / p99 ms', 'server CPU ms / req', 'SQL / req', 'errors'],
    rows.flatMap((row) =>
      servers
        .filter((name) => row.results[name])
        .map((name) => {
          const result = row.results[name]!;
          return [row.size, row.endpoint, row.generator, LABEL[name], `${round(result.p50)} / ${round(result.p99)}`, round(result.cpuMs, 3), round(result.statementsPerRequest, 3), String(result.errors)];
        }),
    ),
  );
  return [...throughput, '', ...detail];
}

export function renderReport(results: BenchResults, other?: BenchResults): string {
  const servers: ServerName[] = ['bare', 'express', 'hits', 'off', 'baseline'];
  const rss = (of: Partial<Record<ServerName, number>>) => servers.map((name) => `${LABEL[name]} ${round(of[name], 0)} MB`).join(', ');
  const statementsAt = (label: string, kind: string) => ['S', 'M', 'L'].map((size) => String(results.statements.get(`${size}|${label}|${kind}`) ?? 'n/a'));
  return [
    '# Benchmarks',
    '',
    'One run of `npm run bench`: the GraphQL-backed facade, with its response cache on (hits) and off',
    '(builds), against two servers that send the very bytes the facade sent, recorded just before: a bare',
    '`node:http` server (`bench/bare.ts`, the wire\'s limit) and an express 5 app without middleware',
    '(`bench/express-reference.ts`, the framework\'s); and against a hand-written baseline',
    '(`bench/baseline.ts`: express + pg, one SQL query per endpoint). Every server is a process of its',
    'own, the load generator another. Bodies are checked byte for byte before anything is measured.',
    'Earlier runs and what each optimisation gained: [benchmark-history.md](benchmark-history.md).',
    '',
    `Machine: ${results.machine}. Load average (1, 5, 15 min) of the shared machine: ${results.loadAverage.start} at the start, ${results.loadAverage.end} at the end.`,
    '',
    'Reproduce: `DATABASE_URL=postgresql://… npm run bench` (a database of its own is created and dropped;',
    `without DATABASE_URL the embedded database). Load: ${CONNECTIONS} connections, ${WARMUP} s warm-up per server, then ${results.rounds} rounds of`,
    `${DURATION} s in which the servers take turns (who goes first rotates). Tables give medians over the rounds;`,
    'a ratio is the median of the rounds\' ratios, its range in brackets. autocannon runs in the bench\'s',
    'process; wrk (Debian\'s package, when installed) is a lighter generator in a process of its own, to show',
    'whether autocannon is the ceiling. Both facades run with the arguments of `npm start` and production',
    `settings (the response cache at its default ${DEFAULT_RESPONSE_CACHE_MAX_BYTES / 2 ** 20} MiB, or off) but the rate limit, lifted by \`RATE_LIMIT_MAX\`.`,
    '',
    'Sizes: S = 5 runs, 20 bookings; M = 200 published runs × 6 sessions (+ 20 drafts and a cancelled',
    'session per run), 5,000 bookings with participants; L = 10,000 runs × 10 sessions, 100,000 bookings.',
    '',
    '## Targets',
    '',
    ...table(['target', 'measured', ''], targets(results)),
    '',
    ...gapSection(results),
    '## Throughput (S, M)',
    '',
    ...loadTables(results.rows, servers),
    '',
    `Peak RSS over the load at S and M: ${rss(results.rssAfterM)}.`,
    '',
    ...nodeVersionsSection(results, other),
    '## Cache misses (M)',
    '',
    `${MISSES} requests per server, one at a time, each after a committed change to the workspace, the facade`,
    'with the cache on (every request a miss: the data version read, the build, the answer stored) and off',
    'alternating. Client time, median; the ratio is the median of the pairs\' ratios.',
    '',
    ...table(
      ['endpoint', 'miss ms', 'cache off ms', 'miss / off', 'miss CPU ms', 'off CPU ms', 'miss SQL', 'off SQL', 'misses counted'],
      ENDPOINTS.map((endpoint) => {
        const miss = results.misses.get(endpoint.label)!;
        return [endpoint.label, round(miss.missMs, 2), round(miss.offMs, 2), `**${round(miss.ratio, 2)}×**`, round(miss.missCpuMs, 2), round(miss.offCpuMs, 2), round(miss.missStatements, 2), round(miss.offStatements, 2), `${miss.misses} of ${miss.requests}`];
      }),
    ),
    '',
    '## SQL statements of one request',
    '',
    `One request sent more than the key cache's ${KEY_CACHE_TTL_MS} ms after the previous one, so its key lookup is counted.`,
    '',
    ...table(
      ['endpoint', 'server', 'S', 'M', 'L'],
      ENDPOINTS.flatMap((endpoint) => STATEMENT_KINDS.map((kind) => [endpoint.label, { hit: 'facade, cache hit', miss: 'facade, cache miss', off: 'facade, cache off', baseline: 'baseline' }[kind], ...statementsAt(endpoint.label, kind)])),
    ),
    '',
    '## Single requests in sequence (median of 7)',
    '',
    ...table(
      ['endpoint', 'server', 'M ms', 'L ms', 'L / M'],
      ENDPOINTS.slice(0, 2).flatMap((endpoint) =>
        servers.map((name) => {
          const [m, l] = ['M', 'L'].map((size) => results.sequential.get(`${size}|${endpoint.label}|${name}`) ?? Number.NaN) as [number, number];
          return [endpoint.label, LABEL[name], round(m), round(l), round(l / m)];
        }),
      ),
    ),
    '',
    '## Cache hits under load at L',
    '',
    ...loadTables(results.lRows, ['bare', 'hits']),
    '',
    `Peak RSS over the L requests (started afresh before them): ${rss(results.rssAtL)}.`,
    '',
    '## Writes',
    '',
    `1,000 bookings inserted into one workspace by 10 concurrent writers with a webhook endpoint registered, with the data-version triggers and with those of bookings and participants disabled; ${results.rounds} rounds each after a warm-up, alternating. Milliseconds for all 1,000, median (range).`,
    '',
    ...table(
      ['writes', 'with the triggers ms', 'without ms', 'with / without'],
      results.writes.map((variant) => [
        variant.name,
        `${round(median(variant.withTriggers), 0)} (${round(Math.min(...variant.withTriggers), 0)}–${round(Math.max(...variant.withTriggers), 0)})`,
        `${round(median(variant.withoutTriggers), 0)} (${round(Math.min(...variant.withoutTriggers), 0)}–${round(Math.max(...variant.withoutTriggers), 0)})`,
        `**${round(median(variant.withTriggers) / median(variant.withoutTriggers), 2)}×**`,
      ]),
    ),
    '',
    ...webhookLatencySection(results.webhooks),
    '',
    ...settingsSection(results.settings),
    '',
    '## A newcomer\'s first answer',
    '',
    `\`npm start\` (\`dist/src/main.js\`) on an empty data directory, from the start of the process to the first 200 from /courses with the demo key it prints, three times, each on a data directory of its own: ${results.firstAnswers.map((ms) => `${round(ms / 1000, 2)} s`).join(', ')}; median ${round(results.firstAnswerMs / 1000, 2)} s.`,
    '',
    '## Checks',
    '',
    ...results.checks.map((check) => `- ${check}`),
    '',
  ].join('\n');
}
