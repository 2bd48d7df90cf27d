/**
 * `tsx bench/profile-hits.ts [endpoint label]`: seeds M, starts the facade with `--cpu-prof`, loads
 * one endpoint's cache hits for BENCH_DURATION_S, and prints where the facade's CPU time went
 * (self time by function, and by package), from the profile V8 wrote.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import getPort from 'get-port';
import waitOn from 'wait-on';
import { migrate } from '../src/db/migrate.ts';
import { ENDPOINTS, openBenchDatabase, seed } from './database.ts';
import { load, warmUp } from './load.ts';
import { startArguments, stop, type Served } from './servers.ts';
import { SIZES } from './sizes.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
}

const label = process.argv[2] ?? '/bookings + participants:read';
const endpoint = ENDPOINTS.find((candidate) => candidate.label === label)!;
const database = await openBenchDatabase();
try {
  await migrate(database.db);
  const seeded = await seed(database.db, SIZES.find((size) => size.name === 'M')!);
  await database.db.query('ANALYZE');
  const dir = await mkdtemp(join(tmpdir(), 'profile-'));
  const port = await getPort();
  const profiling = process.env.PROFILE !== 'off';
  const child = spawn(process.execPath, [...(profiling ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []), ...(await startArguments())], {
    cwd: new URL('..', import.meta.url).pathname,
    env: { PATH: process.env.PATH, ...database.serverEnv, PORT: String(port), INTERNAL_PORT: String(await getPort()), DEMO: 'false', RATE_LIMIT_MAX: '1000000000', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitOn({ resources: [`http-get://127.0.0.1:${port}/healthz`], timeout: 60_000, interval: 50, window: 0 });
  const served: Served = { name: 'hits', url: `http://127.0.0.1:${port}`, child, statements: async () => 0, metrics: async () => '' };
  const key = seeded[endpoint.key];
  await warmUp(served, endpoint.path, key);
  const results = [];
  for (let round = 0; round < Number(process.env.BENCH_ROUNDS ?? 1); round += 1) results.push(await load(served, endpoint.path, key, (process.env.BENCH_GENERATOR as 'wrk' | undefined) ?? 'autocannon'));
  const result = results.sort((a, b) => a.cpuMs - b.cpuMs)[Math.floor(results.length / 2)]!;
  process.stderr.write(`${label}: ${result.rps.toFixed(0)} req/s, ${result.cpuMs.toFixed(3)} CPU ms / req\n`);
  await stop(child);
  if (profiling) await printProfile(dir);
} finally {
  await database.close();
}

async function printProfile(dir: string): Promise<void> {
  const file = (await readdir(dir)).find((name) => name.endsWith('.cpuprofile'))!;
  const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as { nodes: ProfileNode[] };
  const total = profile.nodes.reduce((sum, node) => sum + node.hitCount, 0);
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  for (const node of profile.nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^file:\/\/.*?\/(node_modules|dist)\//, '$1/');
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ?? (url.includes('/dist/') ? 'service' : url.startsWith('node:') ? 'node' : functionName.startsWith('(') ? functionName : 'other');
    byFunction.set(`${functionName || '(anonymous)'} ${where}:${lineNumber}`, (byFunction.get(`${functionName || '(anonymous)'} ${where}:${lineNumber}`) ?? 0) + node.hitCount);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + node.hitCount);
  }
  const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, hits]) => `${((hits / total) * 100).toFixed(1).padStart(5)} %  ${name}`);
  process.stdout.write(['By package:', ...top(byPackage, 15), '', 'By function:', ...top(byFunction, 40)].join('\n') + '\n');
}
