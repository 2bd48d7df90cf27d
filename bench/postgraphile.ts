/**
 * Internal GraphQL against PostGraphile v5 on the same data (issue 42): the bench's database seeded
 * with M and a workspace of 2,000 runs × 10 sessions, the service's internal listener and
 * PostGraphile (amber preset, NODE_ENV=production, bench/postgraphile/server.mjs) each a process
 * of its own on this Node.js, Q1–Q3 (bench/graphql-queries.ts) checked to give the same rows on
 * both, then each server loaded alone by autocannon in rounds, who goes first rotating: req/s,
 * p50/p99, the server's CPU per request (/proc/<pid>/stat) and PostgreSQL's (the ticks of the
 * bench database's backends over the round). PostGraphile runs on Node >= 22 only; on an older
 * Node the service alone is measured and a line says so. PostGraphile is installed into
 * bench/postgraphile/ from its own lockfile on first use: it is not a package of the service.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual, promisify } from 'node:util';
import autocannon from 'autocannon';
import getPort from 'get-port';
import { migrate } from '../src/db/migrate.ts';
import type { Database } from '../src/db/database.ts';
import { importFixture } from '../src/fixtures/import-fixture.ts';
import { SIZES, fixtureFor, openBenchDatabase, seed } from './database.ts';
import { QUERIES, RUNS_WORKSPACE, type BenchQuery } from './graphql-queries.ts';
import type { BenchOptions } from './options.ts';
import type { GraphqlComparison, GraphqlRound, GraphqlServerName } from './results.ts';
import { INTERNAL_TOKEN, cpuSeconds, spawnServer, startFacade, stop } from './servers.ts';

const log = (message: string) => process.stderr.write(`${message}\n`);
const DIRECTORY = new URL('postgraphile/', import.meta.url).pathname;
/** The oldest Node PostGraphile 5 runs on (its engines). */
export const POSTGRAPHILE_MIN_NODE = 22;
/** autocannon's connections: the concurrency the comparison was first measured at (issue 42). */
export const POSTGRAPHILE_CONNECTIONS = 16;

interface GraphqlServer {
  name: GraphqlServerName;
  url: string;
  headers: Record<string, string>;
  child: ChildProcess;
  query(query: BenchQuery): string;
}

/** PostGraphile's packages, installed from bench/postgraphile/package-lock.json when they are not there. */
async function installPostgraphile(): Promise<string> {
  const manifest = `${DIRECTORY}node_modules/postgraphile/package.json`;
  if (!existsSync(manifest)) {
    log(`installing PostGraphile into ${DIRECTORY} (npm ci)`);
    await promisify(execFile)('npm', ['ci', '--no-audit', '--no-fund', '--prefix', DIRECTORY]);
  }
  return (JSON.parse(await readFile(manifest, 'utf8')) as { version: string }).version;
}

async function post(server: GraphqlServer, query: BenchQuery, variables: Record<string, unknown>): Promise<{ status: number; body: { data?: unknown; errors?: unknown[] } }> {
  const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers: server.headers, body: JSON.stringify({ query: server.query(query), variables }) });
  return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: unknown[] } };
}

async function startPostgraphile(env: Record<string, string>): Promise<GraphqlServer> {
  const port = await getPort();
  const child = spawnServer([`${DIRECTORY}server.mjs`], { ...env, PORT: String(port), NODE_ENV: 'production' }, DIRECTORY);
  const server: GraphqlServer = {
    name: 'postgraphile',
    url: `http://127.0.0.1:${port}`,
    headers: { 'content-type': 'application/json' },
    child,
    query: (query) => query.postgraphile,
  };
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`PostGraphile exited with ${child.exitCode}`);
    try {
      const answer = await fetch(`${server.url}/graphql`, { method: 'POST', headers: server.headers, body: '{"query":"{ __typename }"}' });
      if (answer.status === 200) return server;
    } catch {
      // Not listening yet.
    }
    if (Date.now() - started > 60_000) throw new Error('PostGraphile did not answer within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** CPU ticks (1/100 s) each backend of the bench's database has used so far, by process id. */
async function backendTicks(db: Database): Promise<Map<number, number>> {
  const { rows } = await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  const ticks = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
      ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    } catch {
      // A backend that has just gone.
    }
  }
  return ticks;
}

async function loadRound(db: Database, server: GraphqlServer, query: BenchQuery, variables: Record<string, unknown>, seconds: number, connections: number): Promise<GraphqlRound> {
  const body = JSON.stringify({ query: server.query(query), variables });
  const before = { node: await cpuSeconds(server.child), pg: await backendTicks(db) };
  const result = await autocannon({ url: `${server.url}/graphql`, method: 'POST', headers: server.headers, body, connections, duration: seconds });
  const after = { node: await cpuSeconds(server.child), pg: await backendTicks(db) };
  let pgTicks = 0;
  for (const [pid, ticks] of after.pg) pgTicks += ticks - (before.pg.get(pid) ?? 0);
  const requests = result.requests.total;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    nodeCpuMs: requests > 0 ? ((after.node - before.node) * 1000) / requests : Number.NaN,
    pgCpuMs: requests > 0 ? (pgTicks * 10) / requests : Number.NaN,
    errors: result.errors + result.non2xx,
  };
}

/** Whether both servers give the same rows for `query`; throws naming the first difference. */
async function checkSameRows(servers: GraphqlServer[], query: BenchQuery, variables: Record<string, unknown>): Promise<string> {
  const answers = [];
  for (const server of servers) {
    const answer = await post(server, query, variables);
    if (answer.status !== 200 || answer.body.errors) throw new Error(`${query.name} on ${server.name}: ${answer.status} ${JSON.stringify(answer.body.errors ?? answer.body).slice(0, 500)}`);
    answers.push(query.rows(answer.body.data, server.name));
  }
  const [first, ...rest] = answers;
  for (const [i, other] of rest.entries()) {
    if (!isDeepStrictEqual(first, other)) throw new Error(`${query.name}: ${servers[i + 1]!.name} gives other rows than ${servers[0]!.name}`);
  }
  const count = (first as unknown[]).length;
  const nested = (first as Array<{ sessions?: unknown[] }>).reduce((sum, row) => sum + (row.sessions?.length ?? 0), 0);
  return `${query.name}: ${count} rows${nested ? ` and ${nested} sessions` : ''}${servers.length > 1 ? ', the same on both servers' : ''}`;
}

/** `other`: another checkout whose build is measured as the service (a before beside an after). */
export async function comparePostgraphile(options: Pick<BenchOptions, 'rounds' | 'duration' | 'warmup' | 'connections' | 'other'>): Promise<GraphqlComparison | null> {
  if (!process.env.DATABASE_URL) {
    log('internal GraphQL against PostGraphile: DATABASE_URL is not set, not measured (PostGraphile serves PostgreSQL only)');
    return null;
  }
  const major = Number(process.versions.node.split('.')[0]);
  const skipped = major < POSTGRAPHILE_MIN_NODE ? `PostGraphile 5 needs Node ≥ ${POSTGRAPHILE_MIN_NODE}; on Node ${process.version} the service alone is measured` : null;
  if (skipped) log(skipped);
  const postgraphileVersion = skipped ? null : await installPostgraphile();
  const database = await openBenchDatabase();
  const servers: GraphqlServer[] = [];
  try {
    await migrate(database.db);
    const m = await seed(database.db, SIZES.find((size) => size.name === 'M')!);
    const started = Date.now();
    const runs = await importFixture(database.db, fixtureFor(RUNS_WORKSPACE), {});
    log(`seeded M and ${RUNS_WORKSPACE.publishedRuns} runs × ${RUNS_WORKSPACE.sessionsPerRun} sessions (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    await database.db.query('ANALYZE');
    const env = { ...database.serverEnv, NODE_ENV: 'production' };
    const facade = await startFacade('off', { ...env, INTERNAL_COST_PER_MINUTE: '1000000000' }, options.other);
    servers.push({
      name: 'service',
      url: facade.internalUrl,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${INTERNAL_TOKEN}` },
      child: facade.child,
      query: (query) => query.service,
    });
    // The public listener is not loaded: its process is the internal listener's.
    if (!skipped) servers.push(await startPostgraphile(env));
    const variables = (query: BenchQuery) => ({ id: query.workspace === 'M' ? m.workspaceId : runs.workspaceId });
    const checks: string[] = [];
    for (const query of QUERIES) checks.push(await checkSameRows(servers, query, variables(query)));
    log(checks.join('; '));
    const results: GraphqlComparison = { node: process.version, skipped, postgraphileVersion, ...pick(options), ...(options.other ? { serviceBuild: options.other } : {}), queries: [], checks };
    for (const query of QUERIES) {
      for (const server of servers) await autocannon({ url: `${server.url}/graphql`, method: 'POST', headers: server.headers, body: JSON.stringify({ query: server.query(query), variables: variables(query) }), connections: options.connections, duration: options.warmup });
      const rounds: Partial<Record<GraphqlServerName, GraphqlRound[]>> = {};
      for (let turn = 0; turn < options.rounds; turn += 1) {
        for (let i = 0; i < servers.length; i += 1) {
          const server = servers[(i + turn) % servers.length]!;
          const round = await loadRound(database.db, server, query, variables(query), options.duration, options.connections);
          (rounds[server.name] ??= []).push(round);
          log(`${query.name} ${server.name}: ${round.rps.toFixed(0)} req/s, p99 ${round.p99} ms, CPU ${round.nodeCpuMs.toFixed(2)} + ${round.pgCpuMs.toFixed(2)} ms per request${round.errors ? `, ${round.errors} errors` : ''}`);
        }
      }
      results.queries.push({ name: query.name, what: query.what, rounds });
    }
    return results;
  } finally {
    for (const server of servers) await stop(server.child);
    await database.close();
  }
}

const pick = ({ rounds, duration, warmup, connections }: Pick<BenchOptions, 'rounds' | 'duration' | 'warmup' | 'connections'>) => ({ rounds, duration, warmup, connections });
