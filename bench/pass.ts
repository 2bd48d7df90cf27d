/**
 * One pass of the bench on the Node.js that runs it: seeds S, M and L, measures the facade (cache
 * hits, misses, builds) against the reference servers and the baseline under load and one request
 * at a time, profiles a hit part by part, and what the data-version triggers cost writers. A
 * load-only pass (the one beside the main pass) stops after the load at S and M.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../src/db/migrate.ts';
import { ENDPOINTS, SIZES, openBenchDatabase, seed, type BenchDatabase, type Endpoint, type Seeded, type SizeSpec } from './database.ts';
import { profileHits } from './hit-parts.ts';
import { load, summarise, warmUp, wrkAvailable } from './load.ts';
import type { BenchOptions } from './options.ts';
import type { Recording } from './reference-servers.ts';
import { median, rowOf, type BenchResults, type Generator, type LoadResult, type LoadRow, type MissResult, type ServerName } from './results.ts';
import { peakRssMb, rawGet, record, resetPeakRss, startBaseline, startFacade, startReference, stop, type Served } from './servers.ts';
import { measureRequestLog, REQUEST_LOG_ROUNDS } from './request-log-cost.ts';
import { measureSettings } from './settings-cost.ts';
import { body, firstAnswer, measureMisses, medianMs, statementsOfOne } from './single-requests.ts';
import { measureWebhookIsolation } from './webhook-isolation.ts';
import { measureWebhookLatency } from './webhook-latency.ts';
import { measureWriteCost } from './write-cost.ts';
import { measureInternalLoad } from './internal-load.ts';
import { POSTGRAPHILE_CONNECTIONS, comparePostgraphile } from './postgraphile.ts';

/** Each row's ratios of requests per second (`a/b`) and of CPU per request (`cpu:a/b`). */
export const PAIRS: Array<[ServerName, ServerName]> = [
  ['hits', 'bare'],
  ['hits', 'express'],
  ['express', 'bare'],
  ['off', 'bare'],
  ['off', 'baseline'],
  ['hits', 'off'],
];

const log = (message: string) => process.stderr.write(`${message}\n`);
export const loadAverage = () => loadavg().map((value) => value.toFixed(2)).join(', ');

interface Run {
  servers: Map<ServerName, Served>;
  seeded: Map<string, Seeded>;
  recordings: Recording[];
}

const keyOf = (run: Run, size: string, endpoint: Endpoint) => run.seeded.get(size)![endpoint.key];
const bytesOf = (run: Run, endpoint: Endpoint, key: string) =>
  Buffer.from(run.recordings.find((recording) => recording.path === endpoint.path && recording.authorization === `Bearer ${key}`)!.body, 'base64').length;

/** The facade's answers, checked byte for byte against the cache-off facade and the baseline, are what the reference servers send. */
async function recordAnswers(run: Run, sizes: readonly SizeSpec[], checks: string[]): Promise<void> {
  const [hits, off, baseline] = (['hits', 'off', 'baseline'] as const).map((name) => run.servers.get(name)!);
  for (const size of sizes) {
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

/** Every server in every round, who goes first rotating, so that a disturbance of the shared machine falls on all. */
export async function loadRow(options: BenchOptions, size: string, endpoint: Endpoint, key: string, bytes: number, servers: Served[], generator: Generator, pairs = PAIRS): Promise<LoadRow> {
  log(`${size} ${endpoint.label} (${generator}): warm-up`);
  for (const server of servers) await warmUp(server, endpoint.path, key, options);
  const runs = new Map<ServerName, LoadResult[]>(servers.map((server) => [server.name, []]));
  const ratios: Record<string, number[]> = {};
  for (let turn = 0; turn < options.rounds; turn += 1) {
    for (let i = 0; i < servers.length; i += 1) {
      const server = servers[(i + turn) % servers.length]!;
      runs.get(server.name)!.push(await load(server, endpoint.path, key, generator, options));
    }
    for (const [a, b] of pairs) {
      if (!runs.has(a) || !runs.has(b)) continue;
      const [ra, rb] = [runs.get(a)![turn]!, runs.get(b)![turn]!];
      (ratios[`${a}/${b}`] ??= []).push(ra.rps / rb.rps);
      (ratios[`cpu:${a}/${b}`] ??= []).push(ra.cpuMs / rb.cpuMs);
      (ratios[`p99:${a}/${b}`] ??= []).push(ra.p99 / rb.p99);
    }
  }
  const [a, b] = pairs[0]!;
  log(`${size} ${endpoint.label} (${generator}): ${a} / ${b} ${ratios[`${a}/${b}`]?.map((ratio) => ratio.toFixed(2)).join(' ')}`);
  const results = Object.fromEntries([...runs].map(([name, rounds]) => [name, summarise(rounds)]));
  return { size, endpoint: endpoint.label, generator, bytes, results, ratios };
}

async function rssOf(run: Run): Promise<Partial<Record<ServerName, number>>> {
  return Object.fromEntries(await Promise.all([...run.servers].map(async ([name, server]) => [name, await peakRssMb(server.child)] as const)));
}

/** The statements of one request at each size (its key lookup included): hit, miss, off and baseline. */
async function statementCounts(run: Run, change: (workspaceId: string) => Promise<unknown>): Promise<Record<string, number>> {
  const statements: Record<string, number> = {};
  const [hits, off, baseline] = (['hits', 'off', 'baseline'] as const).map((name) => run.servers.get(name)!);
  for (const size of SIZES) {
    const workspaceId = run.seeded.get(size.name)!.workspaceId;
    for (const endpoint of ENDPOINTS) {
      const key = keyOf(run, size.name, endpoint);
      const at = `${size.name}|${endpoint.label}`;
      statements[`${at}|hit`] = await statementsOfOne(hits!, endpoint.path, key, () => body(`${hits!.url}${endpoint.path}`, key));
      statements[`${at}|miss`] = await statementsOfOne(hits!, endpoint.path, key, () => change(workspaceId));
      statements[`${at}|off`] = await statementsOfOne(off!, endpoint.path, key);
      statements[`${at}|baseline`] = await statementsOfOne(baseline!, endpoint.path, key);
    }
  }
  return statements;
}

/** Every pass, with no other server running: PostGraphile where this Node.js runs it, the service alone where it does not. */
function againstPostgraphile(options: BenchOptions) {
  log('internal GraphQL against PostGraphile v5');
  return comparePostgraphile({ ...options, connections: POSTGRAPHILE_CONNECTIONS });
}

/** A pass's results before anything is measured: the machine, the database and the options. */
export function newResults(options: BenchOptions, database: Pick<BenchDatabase, 'kind' | 'version'>, loadAtStart: string, checks: string[] = []): BenchResults {
  return {
    node: process.version,
    machine: `${cpus().length} × ${cpus()[0]?.model.trim()}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
    database: `${database.kind} ${database.version}`,
    loadAverage: { start: loadAtStart, end: '' },
    rounds: options.rounds,
    duration: options.duration,
    warmup: options.warmup,
    connections: options.connections,
    rows: [],
    rssAfterM: {},
    loadOnly: options.loadOnly,
    misses: {},
    statements: {},
    sequential: {},
    lRows: [],
    rssAtL: {},
    writes: [],
    firstAnswers: [],
    settings: null,
    hitProfile: null,
    checks,
  };
}

export async function runPass(options: BenchOptions): Promise<BenchResults> {
  log(`Node ${process.version}${options.loadOnly ? ' (load only)' : ''}`);
  const loadAtStart = loadAverage();
  const database = await openBenchDatabase();
  const { db } = database;
  await migrate(db);
  const run: Run = { servers: new Map(), seeded: new Map(), recordings: [] };
  const sizes = options.loadOnly ? SIZES.filter((size) => size.name !== 'L') : SIZES;
  for (const size of sizes) {
    const started = Date.now();
    run.seeded.set(size.name, await seed(db, size));
    log(`seeded ${size.name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  // Fresh tables have no planner statistics until autovacuum gets to them; without this the plans,
  // and so the numbers, would depend on how long seeding took.
  await db.query('ANALYZE');
  const recordingsDir = await mkdtemp(join(tmpdir(), 'bench-recordings-'));
  const checks: string[] = [];
  const row = (size: string, endpoint: Endpoint, names: ServerName[], generator: Generator) => {
    const key = keyOf(run, size, endpoint);
    return loadRow(options, size, endpoint, key, bytesOf(run, endpoint, key), names.map((name) => run.servers.get(name)!), generator);
  };
  const results = newResults(options, database, loadAtStart, checks);
  try {
    for (const name of ['hits', 'off'] as const) run.servers.set(name, await startFacade(name, database.serverEnv));
    run.servers.set('baseline', await startBaseline(db.connectionString));
    await recordAnswers(run, sizes, checks);
    for (const name of ['bare', 'express'] as const) run.servers.set(name, await startReference(name, run.recordings, join(recordingsDir, `${name}.json`)));
    await checkReferences(run);
    log('bodies are byte-identical');

    const everyServer: ServerName[] = ['bare', 'express', 'hits', 'off', 'baseline'];
    for (const size of ['S', 'M']) for (const endpoint of ENDPOINTS) results.rows.push(await row(size, endpoint, everyServer, 'autocannon'));
    if (wrkAvailable) {
      for (const endpoint of ENDPOINTS) results.rows.push(await row('M', endpoint, ['bare', 'express', 'hits'], 'wrk'));
    } else {
      checks.push('wrk is not installed (apt-get install wrk): the second load generator did not run');
    }
    results.rssAfterM = await rssOf(run);
    // In every pass, the one beside on another Node.js too: the log's cost is judged on both.
    const requestLog = await measureRequestLog(database.serverEnv, (servers, endpoint, generator, pairs) => {
      const key = keyOf(run, 'M', endpoint);
      return loadRow({ ...options, rounds: Math.max(options.rounds, REQUEST_LOG_ROUNDS) }, 'M', endpoint, key, bytesOf(run, endpoint, key), servers, generator, pairs);
    });
    results.requestLog = requestLog.rows;
    results.requestLogPlacement = requestLog.placement;
    if (options.loadOnly) {
      for (const server of run.servers.values()) await stop(server.child);
      run.servers.clear();
      results.postgraphile = await againstPostgraphile(options);
      return results;
    }

    const m = run.seeded.get('M')!;
    for (const endpoint of ENDPOINTS) {
      log(`M ${endpoint.label}: misses`);
      const miss: MissResult = await measureMisses(db, run.servers.get('hits')!, run.servers.get('off')!, m.workspaceId, endpoint.path, m[endpoint.key], endpoint.answer);
      results.misses[endpoint.label] = miss;
    }
    results.statements = await statementCounts(run, (workspaceId) => db.query('UPDATE workspaces SET name = name WHERE id = $1', [workspaceId]));

    for (const size of ['M', 'L']) {
      if (size === 'L') for (const server of run.servers.values()) await resetPeakRss(server.child);
      for (const endpoint of ENDPOINTS.slice(0, 2)) {
        for (const [name, server] of run.servers) results.sequential[`${size}|${endpoint.label}|${name}`] = await medianMs(`${server.url}${endpoint.path}`, keyOf(run, size, endpoint));
      }
    }
    // Hits under load at L against the bare server; builds at L are measured one at a time above.
    for (const endpoint of [ENDPOINTS[0]!, ENDPOINTS[2]!]) results.lRows.push(await row('L', endpoint, ['bare', 'hits'], 'autocannon'));
    results.rssAtL = await rssOf(run);
    for (const server of run.servers.values()) await stop(server.child);
    run.servers.clear();

    log('where a hit goes');
    const profiled = ENDPOINTS[2]!;
    const generator: Generator = wrkAvailable ? 'wrk' : 'autocannon';
    const measured = rowOf(results, 'M', profiled.label, generator)?.results.hits?.cpuMs;
    results.hitProfile = await profileHits(database.serverEnv, profiled, keyOf(run, 'M', profiled), options, generator, measured === undefined ? undefined : measured * 1000);

    results.settings = await measureSettings(
      database,
      (servers, endpoint, settingGenerator, pairs) => {
        const key = keyOf(run, 'M', endpoint);
        return loadRow(options, 'M', endpoint, key, bytesOf(run, endpoint, key), servers, settingGenerator, pairs);
      },
      options.rounds,
      options.duration,
    );

    log('writes');
    results.writes = await measureWriteCost(db, options.rounds);
    results.webhooks = await measureWebhookLatency(log);
    results.webhookIsolation = await measureWebhookIsolation(log);
    log('internal load');
    results.internalLoad = await measureInternalLoad(options);
    results.postgraphile = await againstPostgraphile(options);
    log('first start');
    // A newcomer's start is one event; the median of three keeps one slow moment of the shared machine out.
    for (let i = 0; i < 3; i += 1) results.firstAnswers.push(await firstAnswer());
    log(`first answers ${results.firstAnswers.join(', ')} ms (median ${median(results.firstAnswers)})`);
    return results;
  } finally {
    results.loadAverage.end = loadAverage();
    for (const server of run.servers.values()) await stop(server.child);
    await rm(recordingsDir, { recursive: true, force: true });
    await database.close();
  }
}
