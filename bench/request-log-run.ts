/**
 * `tsx bench/run.ts request-log`: what the API keys' request log costs cached hits at M
 * (bench/request-log-cost.ts), alone, on a seeded M of its own, on Node 24 and on this Node.js.
 */
import { migrate } from '../src/db/migrate.ts';
import { SIZES, openBenchDatabase, seed } from './database.ts';
import type { BenchOptions } from './options.ts';
import { loadAverage, loadRow, newResults } from './pass.ts';
import { requestLogSection } from './report-request-log.ts';
import { profileHits } from './hit-parts.ts';
import { wrkAvailable } from './load.ts';
import { measureRequestLog, REQUEST_LOG_ENDPOINTS, REQUEST_LOG_ROUNDS } from './request-log-cost.ts';
import type { BenchResults } from './results.ts';
import { rawGet } from './servers.ts';
import { TARGETS, verdict } from './targets.ts';

/**
 * `tsx bench/run.ts request-log --results <file>`: the phase alone on this Node.js, on a seeded M
 * of its own: the results a pass would hold of it (`requestLog`), nothing else measured.
 */
export async function requestLogPass(options: BenchOptions): Promise<BenchResults> {
  const loadAtStart = loadAverage();
  const database = await openBenchDatabase();
  try {
    await migrate(database.db);
    const seeded = await seed(database.db, SIZES.find((size) => size.name === 'M')!);
    await database.db.query('ANALYZE');
    const { rows, placement } = await measureRequestLog(database.serverEnv, async (servers, endpoint, generator, pairs) => {
      const key = seeded[endpoint.key];
      const bytes = (await rawGet(`${servers[0]!.url}${endpoint.path}`, `Bearer ${key}`)).body.length;
      return loadRow({ ...options, rounds: Math.max(options.rounds, REQUEST_LOG_ROUNDS) }, 'M', endpoint, key, bytes, servers, generator, pairs);
    });
    const results = newResults({ ...options, rounds: Math.max(options.rounds, REQUEST_LOG_ROUNDS), loadOnly: true }, database, loadAtStart);
    results.loadAverage.end = loadAverage();
    results.requestLog = rows;
    // The log's share of a hit's CPU, from profiles: what round-to-round load on a shared machine does not move.
    results.requestLogProfiles = [];
    for (const endpoint of REQUEST_LOG_ENDPOINTS) {
      results.requestLogProfiles.push(await profileHits(database.serverEnv, endpoint, seeded[endpoint.key], options, wrkAvailable ? 'wrk' : 'autocannon'));
    }
    results.requestLogPlacement = placement;
    return results;
  } finally {
    await database.close();
  }
}

/** The section and the log's targets, judged, for the `request-log` command's passes. */
export function requestLogReport(main: BenchResults, beside: BenchResults | undefined): string[] {
  const judged = (results: BenchResults) =>
    TARGETS.filter((target) => target.text.startsWith('request log')).map((target) => {
      const measured = target.measure(results);
      const met = verdict(target, measured);
      return `- Node ${results.node}: ${target.text}: ${measured.map((entry) => entry.shown).join('; ')}: ${met === null ? 'not measured' : met ? 'met' : '**missed**'}`;
    });
  const load = (results: BenchResults) => `Node ${results.node}: load average ${results.loadAverage.start} at the start, ${results.loadAverage.end} at the end; ${results.rounds} rounds of ${results.duration} s, ${results.connections} connections.`;
  return [...requestLogSection(main, beside), ...judged(main), ...(beside ? judged(beside) : []), '', load(main), ...(beside ? [load(beside)] : [])];
}
