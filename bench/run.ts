/**
 * `npm run bench`: seeds S, M and L, measures the facade (cache hits, misses, builds) against the
 * reference servers and the baseline (bench/servers.ts) under load (bench/load.ts) and one
 * request at a time (bench/single-requests.ts), what the data-version triggers cost writers
 * (bench/write-cost.ts), webhook latency (bench/webhook-latency.ts), and writes this run's
 * docs/benchmarks.md (bench/report.ts).
 *
 * BENCH_ROUNDS (default 3), BENCH_DURATION_S (default 5) and BENCH_WARMUP_S (default 3) set the
 * load phases. BENCH_RESULTS_OUT writes this run's results as JSON; BENCH_COMPARE names such a file
 * from a run on another Node.js version, which the report then shows beside this one.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../src/db/migrate.ts';
import { ENDPOINTS, openBenchDatabase, seed, type BenchDatabase, type Endpoint, type Seeded } from './database.ts';
import { DURATION, load, median, summarise, warmUp, wrkAvailable, type Generator, type LoadResult } from './load.ts';
import type { Recording } from './recordings.ts';
import { fromJson, toJson } from './report-node-versions.ts';
import type { SettingsResults } from './report-settings.ts';
import { PAIRS, renderReport, type BenchResults, type LoadRow } from './report.ts';
import { peakRssMb, rawGet, record, resetPeakRss, startBaseline, startFacade, startOtlpSink, startReference, stop, type Served, type ServerName } from './servers.ts';
import { SETTING_PAIRS, variantEnv, type SettingRow } from './settings-cost.ts';
import { body, firstAnswer, measureMisses, medianMs, statementsOfOne, type MissResult } from './single-requests.ts';
import { SIZES, type SizeSpec } from './sizes.ts';
import { measureWebhookLatency } from './webhook-latency.ts';
import { measureWriteCost } from './write-cost.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const log = (message: string) => process.stderr.write(`${message}\n`);
const loadAverage = () => loadavg().map((value) => value.toFixed(2)).join(', ');

interface Run {
  servers: Map<ServerName, Served>;
  seeded: Map<string, Seeded>;
  recordings: Recording[];
}

const keyOf = (run: Run, size: string, endpoint: Endpoint) => run.seeded.get(size)![endpoint.key];
const bytesOf = (run: Run, endpoint: Endpoint, key: string) =>
  Buffer.from(run.recordings.find((recording) => recording.path === endpoint.path && recording.authorization === `Bearer ${key}`)!.body, 'base64').length;

/**
 * The facade's answers, checked byte for byte against the cache-off facade and the baseline, are
 * what the reference servers send; they are checked too once those run.
 */
async function recordAnswers(run: Run, checks: string[]): Promise<void> {
  const [hits, off, baseline] = (['hits', 'off', 'baseline'] as const).map((name) => run.servers.get(name)!);
  for (const size of SIZES) {
    for (const endpoint of ENDPOINTS) {
      const key = keyOf(run, size.name, endpoint);
      const recorded = await record(hits!, endpoint.path, key);
      const bodies = await Promise.all([hits!, off!, baseline!].map((server) => body(`${server.url}${endpoint.path}`, key)));
      if (new Set([Buffer.from(recorded.body, 'base64').toString('utf8'), ...bodies]).size !== 1) throw new Error(`${size.name} ${endpoint.label}: the bodies differ`);
      run.recordings.push(recorded);
    }
    checks.push(`${size.name}: bodies byte-identical on all three endpoints (facade with the cache on, miss and hit, and off; baseline; bare; express)`);
  }
}

async function checkReferences(run: Run): Promise<void> {
  for (const name of ['bare', 'express'] as const) {
    for (const recording of run.recordings) {
      const sent = await rawGet(`${run.servers.get(name)!.url}${recording.path}`, recording.authorization);
      if (sent.body.toString('base64') !== recording.body) throw new Error(`the ${name} server's body differs for ${recording.path}`);
    }
  }
}

/**
 * Every server in every round, who goes first rotating, so that a disturbance of the shared machine
 * falls on all; each round's ratios of requests per second (`a/b`) and of CPU per request (`cpu:a/b`).
 */
async function loadRow(run: Run, size: string, endpoint: Endpoint, names: ServerName[], generator: Generator, pairs = PAIRS): Promise<LoadRow> {
  const key = keyOf(run, size, endpoint);
  const servers = names.map((name) => run.servers.get(name)!);
  log(`${size} ${endpoint.label} (${generator}): warm-up`);
  for (const server of servers) await warmUp(server, endpoint.path, key);
  const runs = new Map<ServerName, LoadResult[]>(names.map((name) => [name, []]));
  const ratios: Record<string, number[]> = {};
  for (let turn = 0; turn < ROUNDS; turn += 1) {
    for (let i = 0; i < servers.length; i += 1) {
      const server = servers[(i + turn) % servers.length]!;
      runs.get(server.name)!.push(await load(server, endpoint.path, key, generator));
    }
    for (const [a, b] of pairs) {
      if (!runs.has(a) || !runs.has(b)) continue;
      const [ra, rb] = [runs.get(a)![turn]!, runs.get(b)![turn]!];
      (ratios[`${a}/${b}`] ??= []).push(ra.rps / rb.rps);
      (ratios[`cpu:${a}/${b}`] ??= []).push(ra.cpuMs / rb.cpuMs);
    }
  }
  const [a, b] = pairs[0]!;
  log(`${size} ${endpoint.label} (${generator}): ${a} / ${b} ${ratios[`${a}/${b}`]?.map((ratio) => ratio.toFixed(2)).join(' ')}`);
  const results = Object.fromEntries(names.map((name) => [name, summarise(runs.get(name)!)]));
  return { size, endpoint: endpoint.label, generator, bytes: bytesOf(run, endpoint, key), results, ratios };
}

async function rssOf(run: Run): Promise<Partial<Record<ServerName, number>>> {
  return Object.fromEntries(await Promise.all([...run.servers].map(async ([name, server]) => [name, await peakRssMb(server.child)] as const)));
}

/** The statements of one request at each size (its key lookup included): hit, miss, off and baseline. */
async function statementCounts(run: Run, change: (workspaceId: string) => Promise<unknown>): Promise<Map<string, number>> {
  const statements = new Map<string, number>();
  const [hits, off, baseline] = (['hits', 'off', 'baseline'] as const).map((name) => run.servers.get(name)!);
  for (const size of SIZES) {
    const workspaceId = run.seeded.get(size.name)!.workspaceId;
    for (const endpoint of ENDPOINTS) {
      const key = keyOf(run, size.name, endpoint);
      const of = (kind: string, count: number) => statements.set(`${size.name}|${endpoint.label}|${kind}`, count);
      of('hit', await statementsOfOne(hits!, endpoint.path, key, () => body(`${hits!.url}${endpoint.path}`, key)));
      of('miss', await statementsOfOne(hits!, endpoint.path, key, () => change(workspaceId)));
      of('off', await statementsOfOne(off!, endpoint.path, key));
      of('baseline', await statementsOfOne(baseline!, endpoint.path, key));
    }
  }
  return statements;
}

/** The pairs of bench/settings-cost.ts at M, each variant facade started for its rows alone. */
async function measureSettings(run: Run, database: BenchDatabase): Promise<SettingsResults> {
  const sink = await startOtlpSink();
  const rows: SettingRow[] = [];
  const skipped: string[] = [];
  const generator: Generator = wrkAvailable ? 'wrk' : 'autocannon';
  let tracedRequests = 0;
  try {
    for (const pair of SETTING_PAIRS) {
      if (pair.postgresOnly && database.kind !== 'PostgreSQL') {
        skipped.push(`${pair.setting}: the embedded database prepares no statements`);
        continue;
      }
      const started = [pair.base, pair.variant].map(async (name) => [name, await startFacade(name, variantEnv(name, database.serverEnv, sink.url))] as const);
      for (const [name, server] of await Promise.all(started)) run.servers.set(name, server);
      try {
        for (const endpoint of pair.endpoints) {
          const row = await loadRow(run, 'M', endpoint, [pair.base, pair.variant], generator, [[pair.variant, pair.base]]);
          rows.push({ pair, row });
          if (pair.variant === 'traced' || pair.variant === 'off-traced') tracedRequests += (row.results[pair.variant]?.rps ?? 0) * DURATION * ROUNDS;
        }
      } finally {
        for (const name of [pair.base, pair.variant]) {
          await stop(run.servers.get(name)!.child);
          run.servers.delete(name);
        }
      }
    }
    return { rows, skipped, exported: { ...(await sink.received()), requests: Math.round(tracedRequests) } };
  } finally {
    await stop(sink.child);
  }
}

async function main(): Promise<void> {
  log(`Node ${process.version}`);
  const loadAtStart = loadAverage();
  const database = await openBenchDatabase();
  const { db } = database;
  await migrate(db);
  const run: Run = { servers: new Map(), seeded: new Map(), recordings: [] };
  for (const size of SIZES) {
    const started = Date.now();
    run.seeded.set(size.name, await seed(db, size));
    log(`seeded ${size.name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  // Fresh tables have no planner statistics until autovacuum gets to them; without this the plans,
  // and so the numbers, would depend on how long seeding took.
  await db.query('ANALYZE');
  const recordingsDir = await mkdtemp(join(tmpdir(), 'bench-recordings-'));
  const checks: string[] = [];
  try {
    for (const name of ['hits', 'off'] as const) run.servers.set(name, await startFacade(name, database.serverEnv));
    run.servers.set('baseline', await startBaseline(db.connectionString));
    await recordAnswers(run, checks);
    for (const name of ['bare', 'express'] as const) run.servers.set(name, await startReference(name, run.recordings, join(recordingsDir, `${name}.json`)));
    await checkReferences(run);
    log('bodies are byte-identical');

    const everyServer: ServerName[] = ['bare', 'express', 'hits', 'off', 'baseline'];
    const rows: LoadRow[] = [];
    const atSizes = SIZES.filter((size: SizeSpec) => size.name !== 'L');
    for (const size of atSizes) for (const endpoint of ENDPOINTS) rows.push(await loadRow(run, size.name, endpoint, everyServer, 'autocannon'));
    if (wrkAvailable) {
      for (const endpoint of ENDPOINTS) rows.push(await loadRow(run, 'M', endpoint, ['bare', 'express', 'hits'], 'wrk'));
    } else {
      checks.push('wrk is not installed (apt-get install wrk): the second load generator did not run');
    }
    const rssAfterM = await rssOf(run);

    const misses = new Map<string, MissResult>();
    const m = run.seeded.get('M')!;
    for (const endpoint of ENDPOINTS) {
      log(`M ${endpoint.label}: misses`);
      misses.set(endpoint.label, await measureMisses(db, run.servers.get('hits')!, run.servers.get('off')!, m.workspaceId, endpoint.path, m[endpoint.key], endpoint.answer));
    }
    const change = (workspaceId: string) => db.query('UPDATE workspaces SET name = name WHERE id = $1', [workspaceId]);
    const statements = await statementCounts(run, change);

    const sequential = new Map<string, number>();
    for (const size of ['M', 'L']) {
      if (size === 'L') for (const server of run.servers.values()) await resetPeakRss(server.child);
      for (const endpoint of ENDPOINTS.slice(0, 2)) {
        for (const [name, server] of run.servers) sequential.set(`${size}|${endpoint.label}|${name}`, await medianMs(`${server.url}${endpoint.path}`, keyOf(run, size, endpoint)));
      }
    }
    // Hits under load at L against the bare server; builds at L are measured one at a time above.
    const lRows: LoadRow[] = [];
    for (const endpoint of [ENDPOINTS[0]!, ENDPOINTS[2]!]) lRows.push(await loadRow(run, 'L', endpoint, ['bare', 'hits'], 'autocannon'));
    const rssAtL = await rssOf(run);
    for (const server of run.servers.values()) await stop(server.child);
    const settings = await measureSettings(run, database);

    log('writes');
    const writes = await measureWriteCost(db, ROUNDS);
    const webhooks = await measureWebhookLatency(log);
    log('first start');
    // A newcomer's start is one event; the median of three keeps one slow moment of the shared machine out.
    const firstAnswers: number[] = [];
    for (let i = 0; i < 3; i += 1) firstAnswers.push(await firstAnswer());
    const firstAnswerMs = median(firstAnswers);
    const results: BenchResults = {
      machine: `${cpus().length} × ${cpus()[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${database.kind} ${database.version}`,
      loadAverage: { start: loadAtStart, end: loadAverage() },
      rounds: ROUNDS,
      rows,
      rssAfterM,
      misses,
      statements,
      sequential,
      lRows,
      rssAtL,
      writes,
      webhooks,
      firstAnswerMs,
      firstAnswers,
      settings,
      checks,
    };
    if (process.env.BENCH_RESULTS_OUT) await writeFile(process.env.BENCH_RESULTS_OUT, JSON.stringify(toJson(results)));
    const other = process.env.BENCH_COMPARE ? fromJson(JSON.parse(await readFile(process.env.BENCH_COMPARE, 'utf8'))) : undefined;
    const report = renderReport(results, other);
    await writeFile(process.env.BENCH_REPORT ?? new URL('../docs/benchmarks.md', import.meta.url), report);
    process.stdout.write(report);
  } finally {
    for (const server of run.servers.values()) await stop(server.child);
    await rm(recordingsDir, { recursive: true, force: true });
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
