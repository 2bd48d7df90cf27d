/** The report's part on webhook latency and on what a booking update costs (bench/webhook-latency.ts). */
import type { LatencyFigures, StatementCount, WebhookIsolationResults, WebhookLatencyResults } from './results.ts';
import { NOISY, THROUGHPUT } from './webhook-isolation.ts';
import { BURST, IDLE_SAMPLES } from './webhook-latency.ts';

const round = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const table = (head: string[], rows: string[][]) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];

const ms = (figures: LatencyFigures) => `${round(figures.p50, 0)} / ${round(figures.p99, 0)}`;
const counted = (count: StatementCount) => `${count.total} (${Object.entries(count.kinds).map(([kind, n]) => `${kind} ${n}`).join(', ')})`;

export function webhookLatencySection(results: WebhookLatencyResults): string[] {
  const withCounts = results.runs.filter((run) => run.statements);
  return [
    '## Webhook latency',
    '',
    'From a booking\'s commit (the writer\'s statement returning) to the answer of an HTTPS receiver in the bench\'s',
    'process, through one `admin -- worker` process with the production settings (on the embedded database it polls',
    `every 500 ms; on PostgreSQL LISTEN/NOTIFY wakes it). Burst: ${BURST.bookings} new bookings (each with its participant,`,
    `one statement) in ${BURST.seconds} s, \`booking.created\`. Single changes: ${IDLE_SAMPLES} booking updates, each after 1 to 3 s`,
    'without events, `booking.updated`. After five warm-up events. Milliseconds.',
    '',
    ...table(
      ['database', 'burst p50 / p99 ms', 'burst max ms', 'burst answered', 'single after idle p50 / p99 ms', 'max ms', 'answered'],
      results.runs.map((run) => [
        run.database,
        ms(run.burst),
        round(run.burst.max, 0),
        `${run.burst.samples} of ${run.burst.samples + run.burst.lost} (written in ${round(run.burst.seconds, 1)} s)`,
        ms(run.idle),
        round(run.idle.max, 0),
        `${run.idle.samples} of ${run.idle.samples + run.idle.lost}`,
      ]),
    ),
    ...results.skipped.map((reason) => `\nNot run: ${reason}.`),
    '',
    ...(withCounts.length > 0
      ? [
          'Statements one booking update executes (`UPDATE bookings SET status = …, updated_at = now()` in its own',
          'transaction), nested ones included, as auto_explain logs them on PostgreSQL (the embedded database runs the',
          'same triggers):',
          '',
          ...table(
            ['database', 'no endpoint subscribed to booking.updated', 'one endpoint subscribed (with participant data)'],
            withCounts.map((run) => [run.database, counted(run.statements!.without), counted(run.statements!.with)]),
          ),
        ]
      : []),
  ];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)] ?? Number.NaN;
const range = (values: number[]) => `${round(median(values), 0)} (${round(Math.min(...values), 0)}–${round(Math.max(...values), 0)})`;

/** The report's part on isolation between tenants and on throughput (bench/webhook-isolation.ts). */
export function webhookIsolationSection(results: WebhookIsolationResults): string[] {
  if (results.skipped) return ['## Webhook isolation and throughput', '', `Not run: ${results.skipped}.`];
  const { worker, bare, fromFirstWrite, writeSeconds, concurrency } = results.throughput;
  const ratios = worker.map((perSecond, i) => perSecond / bare[i]!);
  return [
    '## Webhook isolation and throughput',
    '',
    'PostgreSQL, one `admin -- worker` process with the production settings (15 s attempt timeout, the default',
    `WEBHOOK_CONCURRENCY and per-endpoint and per-workspace bounds). Noisy neighbours: each hanging tenant's receiver`,
    `accepts and never answers and gets ${NOISY.bookingsEach} bookings at once; a second later workspace B (answering 204 at once) gets`,
    `${NOISY.quietBookings} bookings, one every ${NOISY.quietEveryMs} ms. B's latency from commit to its receiver, ms (target p99 ≤ 2,000):`,
    '',
    ...table(
      ['beside', 'B p50 ms', 'B p99 ms', 'B max ms', 'B delivered'],
      results.noisy.map((row) => [`${row.hanging} hanging tenant(s)`, round(row.p50, 0), round(row.p99, 0), round(row.max, 0), `${row.answered} of ${row.expected}`]),
    ),
    '',
    `Throughput: ${THROUGHPUT.bookings} bookings across ${THROUGHPUT.endpoints} endpoints (one per workspace, receivers answering at once), committed in one`,
    `transaction, from its commit to the last answer, against a bare Node HTTPS client with keep-alive posting the same signed requests`,
    `to the same receivers ${concurrency} at a time, in the same run; ${worker.length} rounds, median (range). Target: ≥ 0.5 × the bare client.`,
    `Beside, for the record: the worker's rate from the burst's first write (the writing included) and how long the writing took.`,
    '',
    ...table(
      ['deliveries/s through the worker', 'bare client /s', 'ratio', 'from the first write /s', 'written in s'],
      [[range(worker), range(bare), `${round(median(ratios), 2)} (${round(Math.min(...ratios), 2)}–${round(Math.max(...ratios), 2)})`, range(fromFirstWrite), `${round(median(writeSeconds), 1)} (${round(Math.min(...writeSeconds), 1)}–${round(Math.max(...writeSeconds), 1)})`]],
    ),
  ];
}
