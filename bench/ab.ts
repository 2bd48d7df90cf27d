/**
 * `tsx bench/ab.ts <other checkout> [endpoint label]`: cache hits of this checkout's build (B)
 * against another checkout's (A), both started as `npm start` on the same seeded M, in alternating
 * rounds so that the load of a shared machine falls on both: server CPU per request and requests
 * per second, each round's B / A ratio and their median, and statements per request. Decides
 * whether an optimisation stays. BENCH_GENERATOR picks the load generator (wrk when installed).
 */
import { migrate } from '../src/db/migrate.ts';
import { ENDPOINTS, openBenchDatabase, seed } from './database.ts';
import { load, median, warmUp, wrkAvailable, type Generator } from './load.ts';
import { ratioText } from './format.ts';
import { peakRssMb, startFacade, stop } from './servers.ts';
import { SIZES } from './sizes.ts';

const other = process.argv[2];
if (!other) throw new Error('usage: tsx bench/ab.ts <other checkout> [endpoint label]');
const label = process.argv[3] ?? '/bookings';
const endpoint = ENDPOINTS.find((candidate) => candidate.label === label)!;
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const database = await openBenchDatabase();
try {
  await migrate(database.db);
  const key = (await seed(database.db, SIZES.find((size) => size.name === 'M')!))[endpoint.key];
  await database.db.query('ANALYZE');
  const a = await startFacade('hits', database.serverEnv, other);
  const b = await startFacade('hits', database.serverEnv);
  try {
    for (const server of [a, b]) await warmUp(server, endpoint.path, key);
    const generator = (process.env.BENCH_GENERATOR as Generator | undefined) ?? (wrkAvailable ? 'wrk' : 'autocannon');
    const statements: Record<'a' | 'b', number[]> = { a: [], b: [] };
    const cpu: number[] = [];
    const rps: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const order = round % 2 === 0 ? [a, b] : [b, a];
      const [first, second] = [await load(order[0]!, endpoint.path, key, generator), await load(order[1]!, endpoint.path, key, generator)];
      const [ra, rb] = order[0] === a ? [first, second] : [second, first];
      statements.a.push(ra.statementsPerRequest);
      statements.b.push(rb.statementsPerRequest);
      cpu.push(rb.cpuMs / ra.cpuMs);
      rps.push(rb.rps / ra.rps);
      process.stderr.write(`round ${round + 1}: A ${ra.cpuMs.toFixed(3)} ms ${ra.rps.toFixed(0)} req/s, B ${rb.cpuMs.toFixed(3)} ms ${rb.rps.toFixed(0)} req/s\n`);
    }
    process.stdout.write(`${label}: B / A server CPU per request ${ratioText(cpu)}, req/s ${ratioText(rps)}; SQL per request A ${median(statements.a).toFixed(3)}, B ${median(statements.b).toFixed(3)}; peak RSS A ${(await peakRssMb(a.child)).toFixed(0)} MB, B ${(await peakRssMb(b.child)).toFixed(0)} MB\n`);
  } finally {
    await stop(a.child);
    await stop(b.child);
  }
} finally {
  await database.close();
}
