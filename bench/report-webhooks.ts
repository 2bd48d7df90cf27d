/** The report's part on webhook latency and on what a booking update costs (bench/webhook-latency.ts). */
import type { LatencyFigures, StatementCount, WebhookLatencyResults } from './results.ts';
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
