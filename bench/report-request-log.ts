/** The request log's section of docs/benchmarks.md (bench/request-log-cost.ts), for the main pass and the one beside. */
import { LABEL, median, type BenchResults, type SettingRow } from './results.ts';

const round = (value: number | undefined, digits = 1) => (value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const ratioCell = (values: readonly number[] = []) =>
  values.length ? `**${round(median(values), 2)}×** (${round(Math.min(...values), 2)}–${round(Math.max(...values), 2)})` : 'n/a';

function rowsOf(results: BenchResults): string[][] {
  return (results.requestLog ?? []).map(({ setting, names: [v, b], base, variant, row }: SettingRow) => {
    const [on, off] = [row.results[variant], row.results[base]];
    const both = (pick: (result: NonNullable<typeof on>) => number, digits: number) => `${v} ${round(on && pick(on), digits)} · ${b} ${round(off && pick(off), digits)}`;
    return [
      `Node ${results.node}`,
      setting,
      row.endpoint,
      row.generator,
      both((result) => result.rps, 0),
      both((result) => result.p99, 2),
      ratioCell(row.ratios[`${variant}/${base}`]),
      ratioCell(row.ratios[`p99:${variant}/${base}`]),
      ratioCell(row.ratios[`cpu:${variant}/${base}`]),
      both((result) => result.statementsPerRequest, 4),
    ];
  });
}

export function requestLogSection(main: BenchResults, beside: BenchResults | undefined): string[] {
  const rows = [...rowsOf(main), ...(beside ? rowsOf(beside) : [])];
  if (rows.length === 0) return [];
  const head = ['pass', 'setting', 'endpoint', 'generator', 'req/s', 'p99 ms', 'req/s ratio', 'p99 ratio', 'CPU per request ratio', 'SQL / req'];
  return [
    '## What the request log costs (M)',
    '',
    `Cache hits of one key with the API keys' request log on, as \`npm start\` runs it (${LABEL.hits}: last use, the log's rows, at most 100 per key and second, and the daily counts, collected in memory and written in batches), against the same build with \`KEY_REQUEST_LOG=false\` (${LABEL.unlogged}: last use alone, what a key cost before the log), and with every request of the key logged up to 10,000 a second (${LABEL['logged-all']}); loaded in turns, in each pass, the one beside included, ${main.requestLogPlacement ?? 'servers and wrk placed by the system'}. A ratio is the median of the rounds' ratios, its range in brackets.`,
    '',
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
  ];
}
