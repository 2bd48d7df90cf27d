/**
 * The big-neighbour section of docs/benchmarks.md and its targets, as data (bench/big-neighbour.ts):
 * each target names the numbers of a run it is judged on and its bound.
 */
import type { BigNeighbourResults, Timed } from './big-neighbour.ts';

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
};
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const span = (values: readonly number[]) => `${fixed(Math.min(...values), 0)}–${fixed(Math.max(...values), 0)}`;

export interface BigNeighbourTarget {
  text: string;
  value(results: BigNeighbourResults): number;
  min?: number;
  max?: number;
}

/** A's next /courses after one change, against a full build: time by medians, CPU by sums (the process's CPU is counted in 10 ms ticks). */
const share = (after: Timed, full: Timed) => ({ time: median(after.ms) / median(full.ms), cpu: sum(after.cpuMs) / after.cpuMs.length / (sum(full.cpuMs) / full.cpuMs.length) });

export const BIG_NEIGHBOUR_TARGETS: BigNeighbourTarget[] = [
  { text: "B's p99 beside A ≤ 3 × B's p99 alone", value: (r) => r.beside.p99 / Math.max(r.alone.p99, 1), max: 3 },
  { text: "B's p99 beside A ≤ 100 ms", value: (r) => r.beside.p99, max: 100 },
  { text: "B's throughput beside A ≥ 0.5 × alone", value: (r) => r.beside.requests / r.alone.requests, min: 0.5 },
  { text: "A's next /courses after a one-session change ≤ 5 % of a full build (time)", value: (r) => share(r.afterOneChange, r.full).time, max: 0.05 },
  { text: "A's next /courses after a one-session change ≤ 5 % of a full build (CPU)", value: (r) => share(r.afterOneChange, r.full).cpu, max: 0.05 },
  { text: 'longest event-loop stall while A changes and is read beside B ≤ 50 ms', value: (r) => r.beside.stallMs, max: 50 },
  { text: "longest event-loop stall during A's cold build ≤ 50 ms", value: (r) => r.cold.stallMs, max: 50 },
];

export function judged(results: BigNeighbourResults): string[] {
  return BIG_NEIGHBOUR_TARGETS.map((target) => {
    const value = target.value(results);
    const met = Number.isFinite(value) && (target.min === undefined || value >= target.min) && (target.max === undefined || value <= target.max);
    return `- ${target.text}: ${fixed(value, 3)}: ${met ? 'met' : '**missed**'}`;
  });
}

export function bigNeighbourSection(runs: readonly BigNeighbourResults[]): string[] {
  const lines: string[] = [];
  for (const r of runs) {
    const { time, cpu } = share(r.afterOneChange, r.full);
    lines.push(
      `### Node ${r.node}, ${r.database}: A at ${r.size} (${r.runs} × ${r.sessionsPerRun}, /courses ${fixed(r.coursesBytes / 1e6)} MB)`,
      '',
      `Load average ${r.loadAverage.start} at the start, ${r.loadAverage.end} at the end; B's phases ${r.seconds} s each.`,
      '',
      "| | B requests | B p50 | B p99 | A /courses answers, mean | longest event-loop stall | the facade's cores | its wait for a core | A's readers' cores | stolen by the host |",
      '|---|---|---|---|---|---|---|---|---|---|',
      `| B alone | ${r.alone.requests} | ${fixed(r.alone.p50)} ms | ${fixed(r.alone.p99)} ms | — | ${fixed(r.alone.stallMs)} ms | ${fixed(r.alone.facadeCores, 2)} | ${fixed(r.alone.facadeWaitMsPerS, 0)} ms/s | — | ${fixed(r.alone.stolenMsPerS, 0)} ms/s |`,
      `| B beside A | ${r.beside.requests} | ${fixed(r.beside.p50)} ms | ${fixed(r.beside.p99)} ms | ${r.beside.aAnswers}, ${fixed(r.beside.aMeanMs, 0)} ms | ${fixed(r.beside.stallMs)} ms | ${fixed(r.beside.facadeCores, 2)} | ${fixed(r.beside.facadeWaitMsPerS, 0)} ms/s | ${fixed(r.beside.readersCores, 2)} | ${fixed(r.beside.stolenMsPerS, 0)} ms/s |`,
      '',
      '| A /courses | time to the first byte, median (range) | CPU per answer (sending included) | longest stall |',
      '|---|---|---|---|',
      `| full build (cache off) | ${fixed(median(r.full.ms), 0)} ms (${span(r.full.ms)}) | ${fixed(sum(r.full.cpuMs) / r.full.cpuMs.length, 0)} ms | ${fixed(r.full.stallMs)} ms |`,
      `| cold build in pieces | ${fixed(median(r.cold.ms), 0)} ms | ${fixed(sum(r.cold.cpuMs) / r.cold.cpuMs.length, 0)} ms | ${fixed(r.cold.stallMs)} ms |`,
      `| next after one session changed | ${fixed(median(r.afterOneChange.ms))} ms (${span(r.afterOneChange.ms)}) | ${fixed(sum(r.afterOneChange.cpuMs) / r.afterOneChange.cpuMs.length)} ms | ${fixed(r.afterOneChange.stallMs)} ms |`,
      `| a hit, unchanged (the floor: sending the bytes) | ${fixed(median(r.hit.ms))} ms (${span(r.hit.ms)}) | ${fixed(sum(r.hit.cpuMs) / r.hit.cpuMs.length)} ms | ${fixed(r.hit.stallMs)} ms |`,
      `| PostgreSQL json_agg, one statement | ${fixed(median(r.jsonAggMs), 0)} ms (${span(r.jsonAggMs)}) | (the database's) | — |`,
      '',
      `After one change: ${fixed(time * 100, 2)} % of a full build's time, ${fixed(cpu * 100, 2)} % of its CPU. Cold build in pieces: ${fixed(median(r.cold.ms) / median(r.jsonAggMs), 2)} × json_agg's time${r.jsonAggSame ? ' (the same list, compared parsed)' : ' (**json_agg\'s list differs**)'}.`,
      '',
      ...judged(r),
      '',
    );
  }
  return lines;
}
