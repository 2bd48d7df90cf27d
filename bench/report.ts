/**
 * docs/benchmarks.md from a pass's results (bench/results.ts): the main pass (Node 24), and the
 * load of the pass beside it (another Node.js version) where there is one. The targets are judged
 * from the numbers by their own data (bench/targets.ts); nothing here is measured.
 */
import { DEFAULT_RESPONSE_CACHE_MAX_BYTES } from '../src/config.ts';
import { ENDPOINTS } from './database.ts';
import { PAIRS } from './pass.ts';
import { LABEL, median, rowOf, type BenchResults, type LoadRow, type ServerName } from './results.ts';
import { requestLogSection } from './report-request-log.ts';
import { webhookIsolationSection, webhookLatencySection } from './report-webhooks.ts';
import { internalLoadSection } from './report-internal.ts';
import { postgraphileSection } from './report-postgraphile.ts';
import { KEY_CACHE_TTL_MS, MISSES } from './single-requests.ts';
import { TARGETS, verdict } from './targets.ts';

export const round = (value: number | undefined, digits = 1) => (value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const range = (values: readonly number[] = []) => (values.length ? `${round(Math.min(...values), 2)}–${round(Math.max(...values), 2)}` : 'n/a');
/** A ratio as the median of the rounds' ratios, with their range. */
const ratioCell = (values: readonly number[] = [], bold = true) => (values.length ? `${bold ? '**' : ''}${round(median(values), 2)}×${bold ? '**' : ''} (${range(values)})` : 'n/a');
const percent = (part: number, whole: number) => `${round((part / whole) * 100, 0)} %`;
const table = (head: string[], rows: string[][]) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];
const bytesCell = (bytes: number) => (bytes < 10_240 ? `${bytes} B` : `${round(bytes / 1024, 0)} KB`);
const SERVERS: ServerName[] = ['bare', 'express', 'hits', 'off', 'baseline'];

function targetsSection(main: BenchResults, beside: BenchResults | undefined): string[] {
  const shown = (results: BenchResults | undefined, target: (typeof TARGETS)[number]) => {
    if (!results) return ['', ''];
    const measured = target.measure(results);
    const met = verdict(target, measured);
    return [measured.map((entry) => entry.shown).join('; ') || 'not measured in this pass', met === null ? '' : met ? 'met' : '**missed**'];
  };
  const head = ['target', `Node ${main.node}`, '', ...(beside ? [`Node ${beside.node} (beside)`, ''] : [])];
  return ['## Targets', '', ...table(head, TARGETS.map((target) => [target.text, ...shown(main, target), ...(beside ? shown(beside, target) : [])])), ''];
}

function hitPartsSection(results: BenchResults): string[] {
  const profile = results.hitProfile;
  if (!profile) return [];
  return [
    '## Where a cache hit goes',
    '',
    `The facade started as \`npm start\` with \`--cpu-prof\`, loaded with cache hits of ${profile.endpoint} at M by ${profile.generator} (${round(profile.rps, 0)} req/s while profiled);`,
    `its busy samples split by the file of each function into the parts of a hit, each part's share then taken of the ${round(profile.cpuUs, 1)} µs of CPU a hit`,
    'costs in the load phase above (without the profiler). `tsx bench/run.ts profile` prints the same for any endpoint.',
    '',
    ...table(['part', 'µs per hit', 'share', 'taken to'], profile.parts.map((part) => [part.part, round(part.us, 1), percent(part.share, 1), part.floor])),
    '',
  ];
}

/** CPU per hit split into what node:http costs (the bare server), what express adds, and what the service adds to express. */
function gapSection(results: BenchResults): string[] {
  const rows = results.rows.filter((row) => row.results.bare && row.results.express && row.results.hits);
  const split = (row: LoadRow) => {
    const [bare, express, hits] = [row.results.bare!.cpuMs, row.results.express!.cpuMs, row.results.hits!.cpuMs];
    return [row.size, row.endpoint, row.generator, `${round(median(row.ratios['express/bare'] ?? []), 2)}×`, round(hits, 3), `${round(bare, 3)} (${percent(bare, hits)})`, `${round(express - bare, 3)} (${percent(express - bare, hits)})`, `${round(hits - express, 3)} (${percent(hits - express, hits)})`];
  };
  return [
    '## Where the gap is',
    '',
    'The bare server is node:http writing recorded bytes; express without a single middleware sends the same bytes',
    "through its application and router, and the facade is that express app with the service's checks and cache.",
    "Each server's CPU per request in this pass splits a cache hit's cost:",
    '',
    ...table(['size', 'endpoint', 'generator', 'express / bare req/s', 'facade CPU ms / hit', 'of it node:http (the bare server)', 'express, above node:http', 'the service, above express'], rows.map(split)),
    '',
  ];
}

function loadTables(rows: LoadRow[], servers: ServerName[]): string[] {
  const pairs = PAIRS.filter(([a, b]) => rows.some((row) => row.ratios[`${a}/${b}`]));
  const throughput = table(
    ['size', 'endpoint', 'generator', 'body', ...servers.map((name) => `${LABEL[name]} req/s`), ...pairs.map(([a, b]) => `${a} / ${b}`)],
    rows.map((row) => [row.size, row.endpoint, row.generator, bytesCell(row.bytes), ...servers.map((name) => round(row.results[name]?.rps, 0)), ...pairs.map(([a, b]) => ratioCell(row.ratios[`${a}/${b}`]))]),
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

function besideSection(main: BenchResults, beside: BenchResults | undefined): string[] {
  if (!beside) return [];
  const [a, b] = [main.node, beside.node];
  const rows = main.rows.map((row) => {
    const twin = rowOf(beside, row.size, row.endpoint, row.generator);
    const pair = (pairName: string) => [ratioCell(row.ratios[pairName], false), ratioCell(twin?.ratios[pairName], false)];
    return [row.size, row.endpoint, row.generator, `${round(row.results.hits?.rps, 0)} · ${round(twin?.results.hits?.rps, 0)}`, `${round(row.results.hits?.cpuMs, 3)} · ${round(twin?.results.hits?.cpuMs, 3)}`, ...pair('hits/bare'), ...pair('hits/express'), ...pair('express/bare')];
  });
  return [
    `## Node ${b} beside Node ${a}`,
    '',
    `The load phases at S and M again, on Node ${b}, in a pass of their own right after the main one, on the same machine and database with the`,
    `same settings (load average ${beside.loadAverage.start} at its start). Compare ratios, each within its own pass.`,
    '',
    ...table(['size', 'endpoint', 'generator', `hits req/s ${a} · ${b}`, `hits CPU ms / req ${a} · ${b}`, `hits / bare ${a}`, `hits / bare ${b}`, `hits / express ${a}`, `hits / express ${b}`, `express / bare ${a}`, `express / bare ${b}`], rows),
    '',
    `Facade peak RSS under load at S and M (cache hits · cache off): ${round(main.rssAfterM.hits, 0)} · ${round(main.rssAfterM.off, 0)} MB on Node ${a}, ${round(beside.rssAfterM.hits, 0)} · ${round(beside.rssAfterM.off, 0)} MB on Node ${b}.`,
    '',
  ];
}

function settingsSection(results: BenchResults): string[] {
  const settings = results.settings;
  if (!settings) return [];
  const rows = settings.rows.map(({ setting, names: [v, b], base, variant, row }) => {
    const [baseResult, variantResult] = [row.results[base], row.results[variant]];
    const both = (pick: (result: NonNullable<typeof baseResult>) => number, digits: number) => `${v} ${round(variantResult && pick(variantResult), digits)} · ${b} ${round(baseResult && pick(baseResult), digits)}`;
    return [setting, row.endpoint, row.generator, both((result) => result.rps, 0), both((result) => result.cpuMs, 3), `${v} / ${b} ${ratioCell(row.ratios[`${variant}/${base}`])}`, `${v} / ${b} ${ratioCell(row.ratios[`cpu:${variant}/${base}`])}`, both((result) => result.statementsPerRequest, 2)];
  });
  const { exports, bytes, requests } = settings.exported;
  return [
    '## What a setting costs (M)',
    '',
    `Two facades that differ in one setting, loaded in turns like the servers above: tracing exporting every span over OTLP/HTTP to a receiver in a process of its own (${LABEL.traced}; ${LABEL['off-traced']}) against no OTLP endpoint, where the SDK, its instrumentations and the module hook are never loaded; and listing statements run unnamed (\`DATABASE_PREPARED_STATEMENTS=false\`, what PgBouncer in transaction mode gets by detection) against prepared once per connection and run by name, the default on a direct connection, with the cache off so that every request runs them.`,
    '',
    ...table(['setting', 'endpoint', 'generator', 'req/s', 'server CPU ms / req', 'req/s ratio', 'CPU per request ratio', 'SQL / req'], rows),
    '',
    `The receiver took ${exports} exports, ${round(bytes / 2 ** 20, 1)} MiB, over ${requests} traced requests (${round(bytes / Math.max(requests, 1), 0)} bytes of spans per request).`,
    ...settings.skipped.map((reason) => `Not run: ${reason}.`),
    'Tracing off costs nothing on a cache hit: no SDK is loaded and no span is opened on its path.',
    '',
  ];
}

function oneAtATimeSections(results: BenchResults): string[] {
  const statementsAt = (label: string, kind: string) => ['S', 'M', 'L'].map((size) => String(results.statements[`${size}|${label}|${kind}`] ?? 'n/a'));
  const kinds = { hit: 'facade, cache hit', miss: 'facade, cache miss', off: 'facade, cache off', baseline: 'baseline' } as const;
  return [
    '## Cache misses (M)',
    '',
    `${MISSES} requests per server, one at a time, each after a committed change to the workspace, the facade with the cache on (every request a miss: the data version read, the build, the answer stored) and off alternating. Client time, median; the ratio is the median of the pairs' ratios.`,
    '',
    ...table(
      ['endpoint', 'miss ms', 'cache off ms', 'miss / off', 'miss CPU ms', 'off CPU ms', 'miss SQL', 'off SQL', 'misses counted'],
      Object.entries(results.misses).map(([label, miss]) => [label, round(miss.missMs, 2), round(miss.offMs, 2), `**${round(miss.ratio, 2)}×**`, round(miss.missCpuMs, 2), round(miss.offCpuMs, 2), round(miss.missStatements, 2), round(miss.offStatements, 2), `${miss.misses} of ${miss.requests}`]),
    ),
    '',
    '## SQL statements of one request',
    '',
    `One request sent more than the key cache's ${KEY_CACHE_TTL_MS} ms after the previous one, so its key lookup is counted.`,
    '',
    ...table(['endpoint', 'server', 'S', 'M', 'L'], ENDPOINTS.flatMap((endpoint) => Object.entries(kinds).map(([kind, label]) => [endpoint.label, label, ...statementsAt(endpoint.label, kind)]))),
    '',
    '## Single requests in sequence (median of 7)',
    '',
    ...table(
      ['endpoint', 'server', 'M ms', 'L ms', 'L / M'],
      ENDPOINTS.slice(0, 2).flatMap((endpoint) =>
        SERVERS.map((name) => {
          const [m, l] = ['M', 'L'].map((size) => results.sequential[`${size}|${endpoint.label}|${name}`] ?? Number.NaN) as [number, number];
          return [endpoint.label, LABEL[name], round(m), round(l), round(l / m)];
        }),
      ),
    ),
    '',
    '## Cache hits under load at L',
    '',
    ...loadTables(results.lRows, ['bare', 'hits']),
    '',
    `Peak RSS over the L requests (started afresh before them): ${SERVERS.map((name) => `${LABEL[name]} ${round(results.rssAtL[name], 0)} MB`).join(', ')}.`,
    '',
    '## Writes',
    '',
    `1,000 bookings inserted into one workspace by 10 concurrent writers with a webhook endpoint registered, with the data-version triggers and with those of bookings and participants disabled; ${results.rounds} rounds each after a warm-up, alternating. Milliseconds for all 1,000, median (range).`,
    '',
    ...table(
      ['writes', 'with the triggers ms', 'without ms', 'with / without'],
      results.writes.map((variant) => [variant.name, `${round(median(variant.withTriggers), 0)} (${range(variant.withTriggers)})`, `${round(median(variant.withoutTriggers), 0)} (${range(variant.withoutTriggers)})`, `**${round(median(variant.withTriggers) / median(variant.withoutTriggers), 2)}×**`]),
    ),
    '',
  ];
}

export function renderReport(main: BenchResults, beside?: BenchResults): string {
  return [
    '# Benchmarks',
    '',
    'One run of `npm run bench`: the GraphQL-backed facade, with its response cache on (hits) and off (builds), against two servers that',
    "send the very bytes the facade sent, recorded just before: a bare `node:http` server (the wire's limit) and an express 5 app without",
    "middleware (the framework's), both in `bench/reference-servers.ts`; and against a hand-written baseline (`bench/baseline.ts`: express + pg,",
    'one SQL query per endpoint). Every server is a process of its own, the load generator another. Bodies are checked byte for byte',
    'before anything is measured. Earlier runs and what each optimisation gained: [benchmark-history.md](benchmark-history.md).',
    '',
    `The main pass runs on Node ${main.node}${main.node.startsWith('v24.') ? ', what users run' : ''}${beside ? `; the load phases ran again on Node ${beside.node} beside it` : ''}.`,
    `Machine: ${main.machine}, ${main.database}. Load average (1, 5, 15 min) of the shared machine: ${main.loadAverage.start} at the start, ${main.loadAverage.end} at the end of the main pass.`,
    '',
    `Reproduce: \`DATABASE_URL=postgresql://… npm run bench\` (a database of its own is created and dropped; without DATABASE_URL the embedded`,
    `database). Load: ${main.connections} connections, ${main.warmup} s warm-up per server, then ${main.rounds} rounds of ${main.duration} s in which the servers take turns (who goes`,
    "first rotates). Tables give medians over the rounds; a ratio is the median of the rounds' ratios, its range in brackets. autocannon runs",
    "in the pass's process; wrk (Debian's package) is a lighter generator in a process of its own. Both facades run with the arguments of",
    `\`npm start\` and production settings (the response cache at its default ${DEFAULT_RESPONSE_CACHE_MAX_BYTES / 2 ** 20} MiB, or off) but the rate limit, lifted by \`RATE_LIMIT_MAX\`.`,
    '',
    'Sizes: S = 5 runs, 20 bookings; M = 200 published runs × 6 sessions (+ 20 drafts and a cancelled session per run), 5,000 bookings',
    'with participants; L = 10,000 runs × 10 sessions, 100,000 bookings.',
    '',
    ...targetsSection(main, beside),
    ...hitPartsSection(main),
    ...gapSection(main),
    '## Throughput (S, M)',
    '',
    ...loadTables(main.rows, SERVERS),
    '',
    `Peak RSS over the load at S and M: ${SERVERS.map((name) => `${LABEL[name]} ${round(main.rssAfterM[name], 0)} MB`).join(', ')}.`,
    '',
    ...besideSection(main, beside),
    ...requestLogSection(main, beside),
    ...(main.loadOnly ? [] : oneAtATimeSections(main)),
    ...settingsSection(main),
    ...(main.webhooks ? [...webhookLatencySection(main.webhooks), ''] : []),
    ...(main.webhookIsolation ? [...webhookIsolationSection(main.webhookIsolation), ''] : []),
    ...(main.internalLoad ? [...internalLoadSection(main.internalLoad), ''] : []),
    ...(main.postgraphile || beside?.postgraphile ? postgraphileSection([main.postgraphile, beside?.postgraphile].filter((pass) => pass != null)) : []),
    ...(main.firstAnswers.length
      ? ["## A newcomer's first answer", '', `\`npm start\` on an empty data directory, from the start of the process to the first 200 from /courses with the demo key it prints, three times: ${main.firstAnswers.map((ms) => `${round(ms / 1000, 2)} s`).join(', ')}; median ${round(median(main.firstAnswers) / 1000, 2)} s.`, '']
      : []),
    '## Checks',
    '',
    ...main.checks.map((check) => `- ${check}`),
    '',
  ].join('\n');
}
