/**
 * `tsx bench/run.ts ab <other checkout> [--endpoint …] [--cache off]`: cache hits (or, with
 * `--cache off`, answers built every time) of this checkout's build (B) against another checkout's (A), both started as `npm start` on the same seeded M, in alternating
 * rounds so that the load of a shared machine falls on both: each round's B / A ratio of server CPU
 * per request and of requests per second, their median and range, and statements per request.
 * Decides whether an optimisation stays. `--generator` picks the load generator (wrk when installed).
 */
import { migrate } from '../src/db/migrate.ts';
import { ENDPOINTS, SIZES, openBenchDatabase, seed } from './database.ts';
import { load, warmUp, wrkAvailable } from './load.ts';
import type { BenchOptions } from './options.ts';
import { median } from './results.ts';
import { peakRssMb, startFacade, stop } from './servers.ts';

const ratioText = (values: number[]) => `${median(values).toFixed(2)}× (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;

export async function ab(options: BenchOptions): Promise<void> {
  const endpoint = ENDPOINTS.find((candidate) => candidate.label === options.endpoint);
  if (!endpoint) throw new Error(`--endpoint is one of ${ENDPOINTS.map((candidate) => candidate.label).join(', ')}`);
  const database = await openBenchDatabase();
  try {
    await migrate(database.db);
    const key = (await seed(database.db, SIZES.find((size) => size.name === 'M')!))[endpoint.key];
    await database.db.query('ANALYZE');
    const a = await startFacade(options.cache, database.serverEnv, options.other);
    const b = await startFacade(options.cache, database.serverEnv);
    try {
      for (const server of [a, b]) await warmUp(server, endpoint.path, key, options);
      const generator = options.generator ?? (wrkAvailable ? 'wrk' : 'autocannon');
      const statements: Record<'a' | 'b', number[]> = { a: [], b: [] };
      const cpu: number[] = [];
      const rps: number[] = [];
      for (let round = 0; round < options.rounds; round += 1) {
        const order = round % 2 === 0 ? [a, b] : [b, a];
        const [first, second] = [await load(order[0]!, endpoint.path, key, generator, options), await load(order[1]!, endpoint.path, key, generator, options)];
        const [ra, rb] = order[0] === a ? [first, second] : [second, first];
        statements.a.push(ra.statementsPerRequest);
        statements.b.push(rb.statementsPerRequest);
        cpu.push(rb.cpuMs / ra.cpuMs);
        rps.push(rb.rps / ra.rps);
        process.stderr.write(`round ${round + 1}: A ${ra.cpuMs.toFixed(3)} ms ${ra.rps.toFixed(0)} req/s, B ${rb.cpuMs.toFixed(3)} ms ${rb.rps.toFixed(0)} req/s\n`);
      }
      process.stdout.write(
        `${endpoint.label}, response cache ${options.cache}, on Node ${process.version}: B / A server CPU per request ${ratioText(cpu)}, req/s ${ratioText(rps)}; ` +
          `SQL per request A ${median(statements.a).toFixed(3)}, B ${median(statements.b).toFixed(3)}; peak RSS A ${(await peakRssMb(a.child)).toFixed(0)} MB, B ${(await peakRssMb(b.child)).toFixed(0)} MB\n`,
      );
    } finally {
      await stop(a.child);
      await stop(b.child);
    }
  } finally {
    await database.close();
  }
}
