/** The report's part on webhook latency and on what a booking update costs (bench/webhook-latency.ts). */
import { round, table } from './format.ts';
import { BURST, IDLE_SAMPLES, TARGET_P99_MS, type LatencyFigures, type StatementCount, type WebhookLatencyResults } from './webhook-latency.ts';

const ms = (figures: LatencyFigures) => `${round(figures.p50, 0)} / ${round(figures.p99, 0)}`;
const counted = (count: StatementCount) => `${count.total} (${Object.entries(count.kinds).map(([kind, n]) => `${kind} ${n}`).join(', ')})`;

/** The rows of the report's target table. */
export function webhookLatencyTargets(results: WebhookLatencyResults): string[][] {
  const p99s = results.runs.map((run) => `${run.database} ${round(run.idle.p99, 0)} ms`);
  const met = results.runs.length > 0 && results.runs.every((run) => run.idle.p99 <= TARGET_P99_MS && run.idle.lost === 0);
  return [[`webhooks: p99 from commit to the receiver's answer ≤ ${TARGET_P99_MS / 1000} s for single changes after idle`, p99s.join('; '), met ? 'met' : '**missed**']];
}

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

/** The target and the section alone, for a run of bench/webhook-latency.ts by itself. */
export function webhookLatencyReport(results: WebhookLatencyResults): string[] {
  return [...table(['target', 'measured', ''], webhookLatencyTargets(results)), '', ...webhookLatencySection(results)];
}
