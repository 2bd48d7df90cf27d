/**
 * Where the processes of a measurement run: with `BENCH_SERVER_CPUS` and `BENCH_LOAD_CPUS` (CPU
 * lists as `taskset -c` reads them), each server on its own CPUs and the load generator on others,
 * so that a server measured alone does not share its core with wrk. Unset, the system places them.
 */
import { cpus } from 'node:os';
import { existsSync } from 'node:fs';

const TASKSET = '/usr/bin/taskset';

export type Role = 'server' | 'load';

const VARIABLE: Record<Role, string> = { server: 'BENCH_SERVER_CPUS', load: 'BENCH_LOAD_CPUS' };

/** The program and arguments that run `program` on its role's CPUs, or as given. */
export function pinned(role: Role, program: string, args: string[]): [string, string[]] {
  const list = process.env[VARIABLE[role]];
  if (!list || !existsSync(TASKSET)) return [program, args];
  return [TASKSET, ['-c', list, program, ...args]];
}

/**
 * Runs `work` with servers pinned to the last CPU and the load generator to the others, where the
 * machine has two CPUs or more and `taskset` (util-linux) is there; placements set by the
 * environment are kept. Returns what `work` returned and the placement, for the report.
 */
export async function withServersApart<T>(work: () => Promise<T>): Promise<{ value: T; placement: string }> {
  const count = cpus().length;
  if (count < 2 || !existsSync(TASKSET)) return { value: await work(), placement: 'servers and wrk placed by the system' };
  const saved = { server: process.env.BENCH_SERVER_CPUS, load: process.env.BENCH_LOAD_CPUS };
  process.env.BENCH_SERVER_CPUS ??= String(count - 1);
  process.env.BENCH_LOAD_CPUS ??= count === 2 ? '0' : `0-${count - 2}`;
  const placement = `servers on CPU ${process.env.BENCH_SERVER_CPUS}, wrk on CPU ${process.env.BENCH_LOAD_CPUS}`;
  try {
    return { value: await work(), placement };
  } finally {
    restore('BENCH_SERVER_CPUS', saved.server);
    restore('BENCH_LOAD_CPUS', saved.load);
  }
}

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
