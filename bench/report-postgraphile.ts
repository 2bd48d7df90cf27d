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
    `Node ${results.node}${results.postgraphileVersion ? `, PostGraphile ${results.postgraphileVersion}` : ''}${results.serviceBuild ? `, the service built from ${results.serviceBuild}` : ''}: ${results.rounds} rounds of ${results.duration} s after ${results.warmup} s of warm-up, autocannon with ${results.connections} connections; median of the rounds (range).`,
    ...(results.skipped ? [`${results.skipped}.`] : []),
    '',
    ...table(['query', 'server', 'req/s', 'p50 ms', 'p99 ms', 'Node CPU ms/request', 'PostgreSQL CPU ms/request', 'CPU ms/request', 'req/s ratio', 'errors'], rows),
    '',
    `Rows checked before timing: ${results.checks.join('; ')}.`,
  ];
}

/**
 * Where the service's time went on Q1 and Q3 and what was taken down (issue 42): CPU profiles of the
 * built service on Node 24 (`node --cpu-prof`, NODE_ENV=production, 16 connections, 11 s), self
 * time put to the phase of its nearest caller that has one; idle left out; start-up and the
 * profiler's own cost are in every figure, so the shares are what compares.
 */
const WHERE_THE_TIME_WENT = [
  '### Where the time went, and what was taken down',
  '',
  'CPU profiles of Q1 and Q3 on the built service (Node 24, `node --cpu-prof`, `NODE_ENV=production`, 16 connections), each',
  "sample put to the phase of its nearest caller that has one, idle left out; ms per request under the profiler (whose own cost",
  'and the start-up are in them: read the shares).',
  '',
  '| phase | Q1 before | Q1 after | Q3 before | Q3 after |',
  '|---|---|---|---|---|',
  '| resolvers, graphql-js execution, DataLoader scheduling | 7.8 ms (34 %) | 2.6 ms (22 %) | 8.1 ms (32 %) | 3.2 ms (25 %) |',
  '| garbage collection | 7.3 ms (31 %) | 2.9 ms (24 %) | 8.2 ms (32 %) | 3.3 ms (26 %) |',
  '| HTTP, express, Apollo Server request pipeline, log | 3.0 ms (13 %) | 1.5 ms (12 %) | 3.7 ms (14 %) | 1.5 ms (12 %) |',
  '| serialisation (JSON.stringify, socket writes) | 2.8 ms (12 %) | 2.8 ms (23 %) | 3.0 ms (12 %) | 2.4 ms (18 %) |',
  '| SQL (driver, protocol, statement writes) | 1.3 ms (6 %) | 1.1 ms (9 %) | 1.5 ms (6 %) | 1.3 ms (10 %) |',
  '| row decoding (pg-types, row objects, grouping by parent) | 0.4 ms (2 %) | 0.4 ms (4 %) | 0.6 ms (2 %) | 0.6 ms (4 %) |',
  '| planning (size and cost estimate, personal-data check, field usage, statement plans) | 0.4 ms (2 %) | 0.4 ms (3 %) | 0.4 ms (1 %) | 0.3 ms (2 %) |',
  '| parse and validate | 0.3 ms (1 %) | 0.3 ms (2 %) | 0.4 ms (1 %) | 0.3 ms (2 %) |',
  '',
  'Parse and validate were never the cost: Apollo Server keeps each parsed and validated document by its hash. The cost was',
  "graphql-js's execution of every field of every row (a resolver call, a path object and a promise check per field), made",
  "heavier by Apollo Server's cache-control plugin, whose per-field hook had every resolver of the schema wrapped, and the",
  'garbage all that left. Taken down, each measured and committed alone:',
  '',
  "1. Apollo Server's cache-control plugin off (no field carries a cache hint): no resolver is wrapped.",
  '2. Execution by graphql-jit: Apollo Server hands each validated document to an executor (its gateway interface, the',
  "   served schema unchanged) that compiles the operation once per document and runs the compiled code from then on; a",
  '   field that is a property of its row costs no resolver call. The limits, the cost budget, the personal-data check, trusted',
  '   documents and error masking run before and after it as they did; introspection stays with graphql-js.',
  '3. No ETag on the internal listener: express hashed every answer (~100 kB for Q1 and Q3).',
  "4. A page's statement reads its order's values (a timestamp made UTC text, the id again), of which cursors are made,",
  '   only when a cursor is selected: Q1–Q3 (and the public /bookings) select none; fewer bytes to make, send and decode.',
  "5. The audit line is written pre-serialised, as pino writes it, the lines of one turn in one write (pino's generic",
  '   serialiser, its redaction and a write per request were 3.5 % and 4.6 % of Q2\'s samples).',
  '6. The size and work estimate of a request that passed the limits is kept for its document, operation, variables and the',
  '   table statistics it was made from (5 % of Q1\'s and Q2\'s samples, each request walking the document twice); planning',
  '   went from 3.2 to 1.1 % of Q1\'s and 3.3 to 1.8 % of Q2\'s, the request pipeline and log from 19.4 to 17.5 % of Q2\'s',
  '   (profiles on Node 20). A refused request is estimated each time.',
  '',
  'The statements stay one per list level, batched by DataLoader over all parents (constant in the list\'s size,',
  'tested), each restricted to the token\'s workspaces and without personal columns for a token without the grant. What is',
  'left is mostly allocation and its collection (rows become objects, then the answer\'s objects, then its text),',
  "serialisation and the socket; PostGraphile builds its answer from fewer, wider statements and spends more PostgreSQL CPU.",
  '',
];

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
    ...WHERE_THE_TIME_WENT,
  ];
}
