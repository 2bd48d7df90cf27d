/** The report's part on internal GraphQL beside the public API (bench/internal-load.ts). */
import { INTERNAL_WORKSPACE } from './internal-load.ts';
import { median, type InternalLoadResults, type LatencyRound } from './results.ts';

const round = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const table = (head: string[], rows: string[][]) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];
const spread = (values: number[], digits: number) => `${round(median(values), digits)} (${round(Math.min(...values), digits)}–${round(Math.max(...values), digits)})`;

/** The median ratio beside / alone of one endpoint's rounds, with their range: `p50` or `p99`. */
export function latencyRatios(results: InternalLoadResults, endpoint: string, pick: 'p50' | 'p99'): number[] {
  return results.rounds.filter((row) => row.endpoint === endpoint).map((row) => row.beside[pick] / row.alone[pick]);
}

/** The spread of database time per point: the costliest shape's over the cheapest's. */
export function timePerPointSpread(results: InternalLoadResults): number {
  const values = results.shapes.map((shape) => shape.secondsPer100k).filter(Number.isFinite);
  return values.length < 2 ? Number.NaN : Math.max(...values) / Math.min(...values);
}

export function internalLoadSection(results: InternalLoadResults): string[] {
  const endpoints = [...new Set(results.rounds.map((row) => row.endpoint))];
  const of = (endpoint: string) => results.rounds.filter((row: LatencyRound) => row.endpoint === endpoint);
  return [
    '## Internal GraphQL beside the public API',
    '',
    `On PostgreSQL. The public endpoints at M through the facade with its cache off (every request reads the database), by wrk with`,
    `${results.publicConnections} connections for ${results.duration} s, alone, then beside one internal token with the default budget running, in ${results.loops}`,
    `parallel loops, the costliest request the service accepts: ${results.costliest} aliased \`totalCount\`s of bookings filtered on \`updatedAt\` (no index)`,
    `in a workspace of ${INTERNAL_WORKSPACE.bookings.toLocaleString('en')} bookings (a loop asked to wait waits at most a second). Milliseconds, median of the rounds (range).`,
    '',
    ...table(
      ['endpoint', 'p50 alone', 'p50 beside', 'p50 ratio', 'p99 alone', 'p99 beside', 'p99 ratio'],
      endpoints.map((endpoint) => [
        endpoint,
        spread(of(endpoint).map((row) => row.alone.p50), 1),
        spread(of(endpoint).map((row) => row.beside.p50), 1),
        `${spread(latencyRatios(results, endpoint, 'p50'), 2)}×`,
        spread(of(endpoint).map((row) => row.alone.p99), 1),
        spread(of(endpoint).map((row) => row.beside.p99), 1),
        `${spread(latencyRatios(results, endpoint, 'p99'), 2)}×`,
      ]),
    ),
    '',
    `The internal loops were answered: ${Object.entries(results.internalStatuses).map(([status, count]) => `${count} × ${status}`).join(', ') || 'nothing'}.`,
    '',
    'Database time a cost point buys: each shape sent in a row by a token without a practical budget, against the points the',
    "answers say were charged; the time is PostgreSQL's own (`pg_stat_database.active_time`), read after its backends report it.",
    '',
    ...table(
      ['shape', 'requests', 'points charged', 'database ms', 'idle ms meanwhile', 's of database time per 100,000 points'],
      results.shapes.map((shape) => [shape.name, String(shape.requests), String(Math.round(shape.points)), round(shape.databaseMs, 0), round(shape.idleMs, 0), round(shape.secondsPer100k, 2)]),
    ),
    '',
    `Costliest over cheapest: ${round(timePerPointSpread(results), 1)}×.`,
  ];
}
