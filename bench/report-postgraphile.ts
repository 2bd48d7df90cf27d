/** The report's part on internal GraphQL against PostGraphile v5 (bench/postgraphile.ts), one table per Node.js. */
import { median, type GraphqlComparison, type GraphqlRound, type GraphqlServerName } from './results.ts';


const fixed = (value: number, digits: number) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const spread = (values: number[], digits: number) => (values.length ? `${fixed(median(values), digits)} (${fixed(Math.min(...values), digits)}–${fixed(Math.max(...values), digits)})` : 'n/a');
const table = (head: string[], rows: string[][]) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];

/** Per round, the service's over PostGraphile's: req/s (`rps`) or CPU per request, Node and PostgreSQL together (`cpu`). */
export function comparisonRatios(query: GraphqlComparison['queries'][number], what: 'rps' | 'cpu'): number[] {
  const [service, postgraphile] = [query.rounds.service ?? [], query.rounds.postgraphile ?? []];
  const of = (round: GraphqlRound) => (what === 'rps' ? round.rps : round.nodeCpuMs + round.pgCpuMs);
  return service.slice(0, postgraphile.length).map((round, i) => of(round) / of(postgraphile[i]!));
}

const SERVERS: Array<[GraphqlServerName, string]> = [
  ['service', 'this service'],
  ['postgraphile', 'PostGraphile v5'],
];

export function postgraphileTable(results: GraphqlComparison): string[] {
  const rows: string[][] = [];
  for (const query of results.queries) {
    for (const [name, label] of SERVERS) {
      const rounds = query.rounds[name];
      if (!rounds) continue;
      const pick = (of: (round: GraphqlRound) => number, digits: number) => spread(rounds.map(of), digits);
      rows.push([
        query.name,
        label,
        pick((round) => round.rps, 0),
        pick((round) => round.p50, 0),
        pick((round) => round.p99, 0),
        pick((round) => round.nodeCpuMs, 2),
        pick((round) => round.pgCpuMs, 2),
        pick((round) => round.nodeCpuMs + round.pgCpuMs, 2),
        name === 'service' && query.rounds.postgraphile ? `${spread(comparisonRatios(query, 'rps'), 2)}×` : '',
        String(rounds.reduce((sum, round) => sum + round.errors, 0)),
      ]);
    }
  }
  return [
    `Node ${results.node}${results.postgraphileVersion ? `, PostGraphile ${results.postgraphileVersion}` : ''}: ${results.rounds} rounds of ${results.duration} s after ${results.warmup} s of warm-up, autocannon with ${results.connections} connections; median of the rounds (range).`,
    ...(results.skipped ? [`${results.skipped}.`] : []),
    '',
    ...table(['query', 'server', 'req/s', 'p50 ms', 'p99 ms', 'Node CPU ms/request', 'PostgreSQL CPU ms/request', 'CPU ms/request', 'req/s ratio', 'errors'], rows),
    '',
    `Rows checked before timing: ${results.checks.join('; ')}.`,
  ];
}

export function postgraphileSection(passes: readonly GraphqlComparison[]): string[] {
  return [
    '## Internal GraphQL against PostGraphile v5',
    '',
    'The same PostgreSQL database and rows: M (200 published runs × 7 sessions, 5,000 bookings) and a workspace of 2,000 runs × 10',
    'sessions. PostGraphile 5 with the amber preset (`bench/postgraphile/server.mjs`, `NODE_ENV=production`) and the service as',
    '`npm start` runs it (`NODE_ENV=production`, the bootstrap token), each loaded alone, who goes first rotating. Q1: the first 100',
    "runs of M with their template's title and description and ≤ 20 sessions each; Q2: M's newest 100 bookings with their participant;",
    'Q3: the first 100 runs of the 2,000 with ≤ 20 sessions each (`bench/graphql-queries.ts`, written once for each schema, their rows',
    "compared before timing). CPU per request: the server process's (`/proc/<pid>/stat`) and the bench database's PostgreSQL",
    "backends' over the round. The ratio is the service's req/s over PostGraphile's in the same round.",
    '',
    ...passes.flatMap((pass) => [...postgraphileTable(pass), '']),
  ];
}
