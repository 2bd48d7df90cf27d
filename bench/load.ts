/**
 * Load from this process (autocannon) or from a process of its own (wrk, lighter than a Node
 * client on the same cores): requests per second, latency, and what the server spent per request.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { pinned } from './cpus.ts';
import type { BenchOptions } from './options.ts';
import { median, type Generator, type LoadResult } from './results.ts';
import { cpuSeconds, type Served } from './servers.ts';

/** How long and how hard a server is loaded. */
export type LoadOptions = Pick<BenchOptions, 'duration' | 'warmup' | 'connections'>;

const WRK = '/usr/bin/wrk';
/** wrk, from Debian's packages, when it is installed. */
export const wrkAvailable = existsSync(WRK);

interface Counted {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function withAutocannon(url: string, key: string, duration: number, connections: number): Promise<Counted> {
  const result = await autocannon({ url, connections, headers: { authorization: `Bearer ${key}` }, duration });
  return { requests: result.requests.total, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

/** A wrk duration in milliseconds (`850.00us`, `1.20ms`, `2.00s`). */
function wrkMs(text: string): number {
  const [, value, unit] = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim()) ?? [];
  const scale = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[unit as 'us' | 'ms' | 's' | 'm'];
  return scale === undefined ? Number.NaN : Number(value) * scale;
}

async function withWrk(url: string, key: string, duration: number, connections: number): Promise<Counted> {
  const [program, args] = pinned('load', WRK, ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', '-H', `Authorization: Bearer ${key}`, url]);
  const { stdout } = await promisify(execFile)(program, args);
  const number = (pattern: RegExp) => Number(pattern.exec(stdout)?.[1] ?? 0);
  const requests = number(/(\d+) requests in/);
  const errors = number(/Non-2xx or 3xx responses: (\d+)/) + (/Socket errors: (.*)/.exec(stdout)?.[1]?.match(/\d+/g) ?? []).reduce((sum, n) => sum + Number(n), 0);
  return {
    requests,
    rps: number(/Requests\/sec:\s+([\d.]+)/),
    p50: wrkMs(/^\s+50%\s+(\S+)/m.exec(stdout)?.[1] ?? ''),
    p99: wrkMs(/^\s+99%\s+(\S+)/m.exec(stdout)?.[1] ?? ''),
    errors,
  };
}

const generate = (generator: Generator) => (generator === 'wrk' ? withWrk : withAutocannon);

export async function warmUp(server: Served, path: string, key: string, options: LoadOptions): Promise<void> {
  await withAutocannon(`${server.url}${path}`, key, options.warmup, options.connections);
}

export async function load(server: Served, path: string, key: string, generator: Generator, options: LoadOptions): Promise<LoadResult> {
  const before = { statements: await server.statements(), cpu: await cpuSeconds(server.child) };
  const counted = await generate(generator)(`${server.url}${path}`, key, options.duration, options.connections);
  const after = { statements: await server.statements(), cpu: await cpuSeconds(server.child) };
  const { requests } = counted;
  return {
    rps: counted.rps,
    p50: counted.p50,
    p99: counted.p99,
    statementsPerRequest: requests > 0 ? (after.statements - before.statements) / requests : Number.NaN,
    cpuMs: requests > 0 ? ((after.cpu - before.cpu) * 1000) / requests : Number.NaN,
    errors: counted.errors,
  };
}

/** The rounds of one server at one size and endpoint, summarised by their medians. */
export function summarise(runs: LoadResult[]): LoadResult {
  const of = (pick: (run: LoadResult) => number) => median(runs.map(pick));
  return {
    rps: of((run) => run.rps),
    p50: of((run) => run.p50),
    p99: of((run) => run.p99),
    statementsPerRequest: of((run) => run.statementsPerRequest),
    cpuMs: of((run) => run.cpuMs),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}
