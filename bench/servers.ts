/**
 * The servers a bench run measures, each a process of its own: the facade with its response
 * cache on (hits) and off, the hand-written baseline, and two references that send the facade's
 * recorded bytes: a bare `node:http` server (the wire's limit) and an express app without
 * middleware (the framework's).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import getPort from 'get-port';
import waitOn from 'wait-on';
import { pinned } from './cpus.ts';
import type { Recording } from './reference-servers.ts';
import type { FacadeName, ServerName } from './results.ts';

const ROOT = new URL('..', import.meta.url).pathname;
/** The bootstrap token of the facades the bench starts (every workspace, the personal-data grant). */
export const INTERNAL_TOKEN = randomBytes(24).toString('hex');

export interface Served {
  name: ServerName;
  url: string;
  /** The facade's internal listener (GraphQL, metrics); empty for the other servers. */
  internalUrl: string;
  child: ChildProcess;
  /** Statements the server has sent so far (the reference servers send none). */
  statements(): Promise<number>;
  /** The facade's /metrics text; empty for the other servers. */
  metrics(): Promise<string>;
}

/** Until `url` answers `status`, at most 60 s. */
async function answering(url: string, status = 200): Promise<void> {
  await waitOn({ resources: [url.replace(/^http:/, 'http-get:')], timeout: 60_000, interval: 50, window: 0, validateStatus: (got) => got === status });
}

/** The Node.js arguments of `npm start`, so that the facade runs exactly as it is started. */
export async function startArguments(root = ROOT): Promise<string[]> {
  const pkg = JSON.parse(await readFile(`${root}/package.json`, 'utf8')) as { scripts: { start: string } };
  const [program, ...args] = pkg.scripts.start.split(/\s+/);
  if (program !== 'node') throw new Error(`the start script does not run node: ${pkg.scripts.start}`);
  return args;
}

export function spawnServer(args: string[], env: Record<string, string>, cwd = ROOT): ChildProcess {
  const [program, programArgs] = pinned('server', process.execPath, args);
  return spawn(program, programArgs, { cwd, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

/**
 * The facade as `npm start` runs it, with production settings but the rate limit; from another
 * checkout's build when `root` names one (an A/B comparison); `nodeArguments` go before the
 * start script's own (a profiler's).
 */
export async function startFacade(name: FacadeName, env: Record<string, string>, root = ROOT, nodeArguments: string[] = []): Promise<Served> {
  const [port, internalPort] = [await getPort(), await getPort()];
  const child = spawnServer([...nodeArguments, ...(await startArguments(root))], {
    ...env,
    PORT: String(port),
    INTERNAL_PORT: String(internalPort),
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    DEMO: 'false',
    // The rate limit is lifted by configuration only; every other setting is production's, the
    // response cache's default size included (or the cache turned off).
    RATE_LIMIT_MAX: '1000000000',
    ...(name === 'off' || name === 'off-traced' || name === 'unprepared' ? { RESPONSE_CACHE_MAX_BYTES: '0' } : {}),
    LOG_LEVEL: 'info',
  }, root);
  const url = `http://127.0.0.1:${port}`;
  await answering(`${url}/healthz`);
  // The internal listener starts after the public one.
  await answering(`http://127.0.0.1:${internalPort}/metrics`, 401);
  const metrics = async () => (await fetch(`http://127.0.0.1:${internalPort}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
  return {
    name,
    url,
    internalUrl: `http://127.0.0.1:${internalPort}`,
    child,
    metrics,
    async statements() {
      return Number(/^db_statements_total (\d+)/m.exec(await metrics())?.[1] ?? Number.NaN);
    },
  };
}

export async function startBaseline(connectionString: string): Promise<Served> {
  const port = await getPort();
  const child = spawnServer(['--import', 'tsx', 'bench/baseline.ts'], { DATABASE_URL: connectionString, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await answering(`${url}/stats`);
  return {
    name: 'baseline',
    url,
    internalUrl: '',
    child,
    metrics: async () => '',
    async statements() {
      return ((await (await fetch(`${url}/stats`)).json()) as { statements: number }).statements;
    },
  };
}

/** A reference server answering with the recorded answers of the facade (written to `file`). */
export async function startReference(name: 'bare' | 'express', recordings: Recording[], file: string): Promise<Served> {
  await writeFile(file, JSON.stringify(recordings));
  const port = await getPort();
  const child = spawnServer(['--import', 'tsx', 'bench/reference-servers.ts', name], { BENCH_RECORDINGS: file, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await answering(`${url}/`, 404);
  return { name, url, internalUrl: '', child, metrics: async () => '', statements: async () => 0 };
}

/** The OTLP/HTTP receiver of the traced facades (bench/reference-servers.ts). */
export async function startOtlpSink(): Promise<{ url: string; child: ChildProcess; received(): Promise<{ exports: number; bytes: number }> }> {
  const port = await getPort();
  const child = spawnServer(['--import', 'tsx', 'bench/reference-servers.ts', 'otlp'], { PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await answering(`${url}/stats`);
  return { url, child, received: async () => (await (await fetch(`${url}/stats`)).json()) as { exports: number; bytes: number } };
}

/** One GET as it went over the wire: status, raw header pairs, body. */
export function rawGet(url: string, authorization: string): Promise<{ status: number; rawHeaders: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { authorization } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Headers Node's HTTP server writes by itself: the references' Node adds them as the facade's did. */
const NODE_WRITES = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** The facade's answer to one request, as the reference servers will send it. */
export async function record(facade: Served, path: string, key: string): Promise<Recording> {
  const authorization = `Bearer ${key}`;
  const answer = await rawGet(`${facade.url}${path}`, authorization);
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
  const headers: string[] = [];
  for (let i = 0; i < answer.rawHeaders.length; i += 2) {
    if (!NODE_WRITES.has(answer.rawHeaders[i]!.toLowerCase())) headers.push(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
  }
  return { path, authorization, status: answer.status, headers, body: answer.body.toString('base64') };
}

/** User + system CPU seconds the process has used so far (Linux clock ticks are 1/100 s). */
export async function cpuSeconds(child: ChildProcess): Promise<number> {
  const fields = (await readFile(`/proc/${child.pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** How long the process's main thread has waited for a core so far (ms): the second field of `/proc/<pid>/schedstat`. */
export async function runQueueWaitMs(child: ChildProcess): Promise<number> {
  return Number((await readFile(`/proc/${child.pid}/schedstat`, 'utf8')).split(' ')[1]) / 1e6;
}

/** CPU time the machine's hypervisor gave to others while this machine's cores wanted it (`steal` of /proc/stat, all cores), in ms. */
export async function stolenMs(): Promise<number> {
  const fields = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/);
  return (Number(fields[8] ?? 0) * 1000) / 100;
}

/** Fields of the process's memory as Linux counts it (`VmRSS`, `VmHWM`, `RssFile`, …), in MB. */
export async function memoryMb<F extends string>(child: ChildProcess, fields: readonly F[]): Promise<Record<F, number>> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
  const of = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) / 1024;
  return Object.fromEntries(fields.map((field) => [field, of(field)])) as Record<F, number>;
}

export async function peakRssMb(child: ChildProcess): Promise<number> {
  return (await memoryMb(child, ['VmHWM'])).VmHWM;
}

/** Starts the process's peak RSS afresh from its current RSS (Linux: `5` to clear_refs). */
export async function resetPeakRss(child: ChildProcess): Promise<void> {
  await writeFile(`/proc/${child.pid}/clear_refs`, '5');
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
