/**
 * `tsx bench/run.ts big-neighbour`: one large, busy workspace (A) beside a small one (B) on one
 * facade (docs/benchmarks.md, "A big, busy neighbour"). A at `--size` (L: 10,000 published runs ×
 * 10 sessions) has one session edited every 250 ms while ten of its keys each ask for /courses
 * every 500 ms (their contract limit); B (M) reads /courses and /bookings with 4 connections.
 * Measured: B alone and beside A; A's cold /courses against PostgreSQL's json_agg of the same rows;
 * A's next /courses after a one-session change against a full build (a facade with the cache
 * off); the longest event-loop stall of each phase (the facade's `monitorEventLoopDelay`, read
 * through `nodejs_eventloop_lag_max_seconds`, which each scrape starts afresh).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createApiKey } from '../src/auth/api-key-store.ts';
import { migrate } from '../src/db/migrate.ts';
import { SIZES, fixtureFor, openBenchDatabase, seed, type SizeSpec } from './database.ts';
import { importFixture } from '../src/fixtures/import-fixture.ts';
import type { BenchOptions } from './options.ts';
import { loadAverage } from './pass.ts';
import { cpuSeconds, runQueueWaitMs, startFacade, stolenMs, stop, type Served } from './servers.ts';
import { jsonAggOfCourses } from './json-agg.ts';
import { pinned } from './cpus.ts';

export interface Phase {
  /** B's requests, p50 and p99 (ms), the longest event-loop stall (ms). */
  requests: number;
  p50: number;
  p99: number;
  stallMs: number;
  /** A's /courses answers in the phase: count and mean time (ms). */
  aAnswers: number;
  aMeanMs: number;
  /** Cores the facade used, and how long its main thread waited for one (ms per second); cores A's readers used. */
  facadeCores: number;
  facadeWaitMsPerS: number;
  /** CPU time the machine's hypervisor took away over the phase, ms per second (all cores): how much of the machine there was. */
  stolenMsPerS: number;
  readersCores: number;
}

export interface Timed {
  ms: number[];
  cpuMs: number[];
  stallMs: number;
}

export interface BigNeighbourResults {
  node: string;
  database: string;
  size: string;
  runs: number;
  sessionsPerRun: number;
  coursesBytes: number;
  loadAverage: { start: string; end: string };
  seconds: number;
  alone: Phase;
  beside: Phase;
  /** A's first /courses on the facade with the cache (pieces, yielding). */
  cold: Timed;
  /** A's /courses built whole every time (cache off), the build a change cost before pieces. */
  full: Timed;
  /** A's next /courses after one session changed. */
  afterOneChange: Timed;
  /** A's /courses from the cache, unchanged: the floor (the version read, sending the bytes). */
  hit: Timed;
  /** PostgreSQL's json_agg of the same rows, one statement on one connection. */
  jsonAggMs: number[];
  jsonAggSame: boolean;
}

const A_KEYS = 10;
const EDIT_EVERY_MS = 250;
const ASK_EVERY_MS = 500;
const READERS = new URL('big-neighbour-readers.ts', import.meta.url).pathname;
const log = (message: string) => process.stderr.write(`${message}\n`);

async function stallMs(server: Served): Promise<number> {
  const text = await server.metrics();
  return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? Number.NaN) * 1000;
}

/**
 * One GET: the time to its answer's first bytes (the facade builds a whole answer before it sends
 * any) and to its last, the body read and dropped, so that this process spends no time on A's
 * megabytes beside B's load generator.
 */
function timedGet(url: string, key: string): Promise<{ ms: number; totalMs: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const asked = request(url, { headers: { authorization: `Bearer ${key}` } }, (response) => {
      const ms = performance.now() - started;
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => (response.statusCode === 200 ? resolve({ ms, totalMs: performance.now() - started, bytes }) : reject(new Error(`${url}: ${response.statusCode}`))));
      response.on('error', reject);
    });
    asked.on('error', reject);
    asked.end();
  });
}

/** B's two answers asked ten times each, one at a time: the code paths of a build and a hit compiled before anything is measured. */
async function warm(server: Served, key: string): Promise<void> {
  for (let i = 0; i < 10; i += 1) {
    for (const path of ['/api/public/v1/courses', '/api/public/v1/bookings']) await timedGet(`${server.url}${path}`, key);
  }
}

const WRK_SCRIPT = `local paths = { "/api/public/v1/courses", "/api/public/v1/bookings" }
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % 2) + 1])
end
`;

const wrkMs = (text: string) => {
  const [, value, unit] = /^([\d.]+)(us|ms|s)$/.exec(text.trim()) ?? [];
  return Number(value) * ({ us: 0.001, ms: 1, s: 1000 }[unit as 'us' | 'ms' | 's'] ?? Number.NaN);
};

/**
 * B's load: wrk (a process of its own), 4 connections, each alternating /courses and /bookings;
 * with what the facade (and A's readers, when given) used of the machine meanwhile.
 */
async function loadB(server: Served, key: string, seconds: number, readers?: ChildProcess): Promise<Omit<Phase, 'stallMs' | 'aAnswers' | 'aMeanMs'>> {
  const script = join(tmpdir(), 'big-neighbour-b.lua');
  await writeFile(script, WRK_SCRIPT);
  const [program, args] = pinned('load', '/usr/bin/wrk', ['-t1', '-c4', `-d${seconds}s`, '--latency', '-s', script, '-H', `Authorization: Bearer ${key}`, server.url]);
  const before = [await cpuSeconds(server.child), await runQueueWaitMs(server.child), readers ? await cpuSeconds(readers) : 0, performance.now(), await stolenMs()] as const;
  const { stdout } = await promisify(execFile)(program, args);
  const elapsed = (performance.now() - before[3]) / 1000;
  if (/Non-2xx|Socket errors/.test(stdout)) throw new Error(`B's load: ${stdout}`);
  return {
    requests: Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0),
    p50: wrkMs(/^\s+50%\s+(\S+)/m.exec(stdout)?.[1] ?? ''),
    p99: wrkMs(/^\s+99%\s+(\S+)/m.exec(stdout)?.[1] ?? ''),
    facadeCores: ((await cpuSeconds(server.child)) - before[0]) / elapsed,
    facadeWaitMsPerS: ((await runQueueWaitMs(server.child)) - before[1]) / elapsed,
    stolenMsPerS: ((await stolenMs()) - before[4]) / elapsed,
    readersCores: readers ? ((await cpuSeconds(readers)) - before[2]) / elapsed : 0,
  };
}

/** A's ten readers, a process of their own placed with the load generator (`big-neighbour-readers.ts`). */
function startReaders(orders: { url: string; keys: string[]; askEveryMs: number }): { child: ChildProcess; stop(): Promise<number[]> } {
  const [program, args] = pinned('load', process.execPath, [...process.execArgv, READERS, JSON.stringify(orders)]);
  const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return {
    child,
    async stop() {
      child.stdin.end();
      const code = await exited;
      if (code !== 0) throw new Error(`A's readers exited with ${code}`);
      return JSON.parse(stdout) as number[];
    },
  };
}

async function timeBuilds(server: Served, url: string, key: string, times: number, before: () => Promise<void>): Promise<Timed> {
  const ms: number[] = [];
  const cpuMs: number[] = [];
  await stallMs(server);
  for (let i = 0; i < times; i += 1) {
    await before();
    const cpu = await cpuSeconds(server.child);
    ms.push((await timedGet(url, key)).ms);
    cpuMs.push(((await cpuSeconds(server.child)) - cpu) * 1000);
  }
  return { ms, cpuMs, stallMs: await stallMs(server) };
}

export async function measureBigNeighbour(options: Pick<BenchOptions, 'duration'> & { size: string }): Promise<BigNeighbourResults> {
  const spec = SIZES.find((size) => size.name === options.size);
  if (!spec) throw new Error(`--size is one of ${SIZES.map((size) => size.name).join(', ')}`);
  // A's bookings do not enter /courses: a thousand keep the seeding short.
  const sizeA: SizeSpec = { ...spec, name: `A (${spec.name})`, bookings: 1_000 };
  const loadAtStart = loadAverage();
  const database = await openBenchDatabase();
  const servers: Served[] = [];
  try {
    await migrate(database.db);
    log(`seeding A at ${spec.name} (${spec.publishedRuns} × ${spec.sessionsPerRun}) and B at M`);
    const { workspaceId: aWorkspace } = await importFixture(database.db, fixtureFor(sizeA), {});
    const aKeys = await Promise.all(Array.from({ length: A_KEYS }, async () => (await createApiKey(database.db, { workspaceId: aWorkspace, memberEmail: 'owner@bench.example', scopes: 'courses:read' })).key));
    const b = await seed(database.db, SIZES.find((size) => size.name === 'M')!);
    await database.db.query('ANALYZE');
    const sessions = (await database.db.query<{ id: string }>('SELECT id FROM sessions WHERE workspace_id = $1', [aWorkspace])).rows.map((row) => row.id);
    let edits = 0;
    const edit = () => database.db.query('UPDATE sessions SET location = $2 WHERE id = $1', [sessions[(edits * 7919) % sessions.length], `Room ${(edits += 1)}`]);

    const hits = await startFacade('hits', database.serverEnv);
    const off = await startFacade('off', database.serverEnv);
    servers.push(hits, off);
    const coursesUrl = (server: Served) => `${server.url}/api/public/v1/courses`;

    // Each facade has served another workspace before A's first build, as a running service has: a
    // process's first answers also pay for compiling their code paths (the first build's longest
    // stall on a fresh process was 34–40 ms against 11–22 ms after B's traffic), which is start-up,
    // not the build.
    log("B warms both facades: 20 of its answers each, one at a time");
    await warm(off, b.full);
    await warm(hits, b.full);
    log('A: a full build (cache off), three times');
    const full = await timeBuilds(off, coursesUrl(off), aKeys[0]!, 3, async () => {});
    await stop(off.child);
    log('A: the cold build with pieces');
    const cold = await timeBuilds(hits, coursesUrl(hits), aKeys[0]!, 1, async () => {});
    const body = await (await fetch(coursesUrl(hits), { headers: { authorization: `Bearer ${aKeys[0]!}` } })).text();
    log('A: json_agg of the same rows');
    const jsonAgg = await jsonAggOfCourses(database.db, aWorkspace, 3);
    log('A: the next /courses after one session changed, ten times');
    const afterOneChange = await timeBuilds(hits, coursesUrl(hits), aKeys[0]!, 10, async () => {
      await edit();
    });

    const hit = await timeBuilds(hits, coursesUrl(hits), aKeys[0]!, 10, async () => {});
    log(`B alone, ${options.duration} s`);
    await loadB(hits, b.full, 3);
    await stallMs(hits);
    const alone = { ...(await loadB(hits, b.full, options.duration)), stallMs: await stallMs(hits), aAnswers: 0, aMeanMs: Number.NaN };

    log(`B beside A, ${options.duration} s`);
    let running = true;
    const editor = (async () => {
      while (running) {
        await Promise.all([edit(), new Promise((resolve) => setTimeout(resolve, EDIT_EVERY_MS))]);
      }
    })();
    const readers = startReaders({ url: coursesUrl(hits), keys: aKeys, askEveryMs: ASK_EVERY_MS });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await stallMs(hits);
    const besideB = await loadB(hits, b.full, options.duration, readers.child);
    const besideStall = await stallMs(hits);
    running = false;
    const [aTimes] = await Promise.all([readers.stop(), editor]);
    const beside = { ...besideB, stallMs: besideStall, aAnswers: aTimes.length, aMeanMs: aTimes.reduce((sum, ms) => sum + ms, 0) / aTimes.length };

    return {
      node: process.version,
      database: `${database.kind} ${database.version}`,
      size: spec.name,
      runs: spec.publishedRuns,
      sessionsPerRun: spec.sessionsPerRun,
      coursesBytes: Buffer.byteLength(body),
      loadAverage: { start: loadAtStart, end: loadAverage() },
      seconds: options.duration,
      alone,
      beside,
      cold,
      full,
      afterOneChange,
      hit,
      jsonAggMs: jsonAgg.ms,
      jsonAggSame: JSON.stringify(JSON.parse(jsonAgg.text)) === JSON.stringify(JSON.parse(body)),
    };
  } finally {
    for (const server of servers) await stop(server.child);
    await database.close();
  }
}
