/**
 * What tracing costs a request: `npm start` with tracing off (no endpoint) and on (every span
 * exported over OTLP/HTTP to a sink in this process), in alternating rounds on the same machine,
 * `/api/public/v1/courses` of the demo workspace with its key, autocannon for ROUND_S seconds each.
 *
 *   npm run build && npx tsx bench/tracing-cost.ts [rounds] [seconds] [requests per second]
 *
 * Without a rate autocannon sends as fast as the server answers (throughput); with one, both modes
 * serve the same load, and the server's CPU time per request compares them on a busy machine too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const ROOT = new URL('..', import.meta.url).pathname;
const ROUNDS = Number(process.argv[2] ?? 2);
const ROUND_S = Number(process.argv[3] ?? 10);
const RATE = process.argv[4] ? Number(process.argv[4]) : undefined;
const CONNECTIONS = 10;
const START = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/).slice(1);

/** Receives the exports and counts their spans' bytes; answers as a collector does. */
let exportedBytes = 0;
let exports = 0;
const sink = createServer((req, res) => {
  req.on('data', (chunk: Buffer) => (exportedBytes += chunk.length));
  req.on('end', () => {
    exports += 1;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
const sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

interface Server {
  child: ChildProcess;
  url: string;
  key: string;
}

async function start(dataDir: string, traced: boolean): Promise<Server> {
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '100000000',
    ...(traced ? { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl } : {}),
  };
  const child = spawn(process.execPath, START, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /\(Beta\) on (http:\/\/\S+)/.exec(out)?.[1];
      const key = /Key with every scope:\s+(\S+)/.exec(out)?.[1];
      if (url && key) resolve({ child, url, key });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
}

async function stop(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

/** CPU time (user + system, ms) the process has used, from /proc. */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function measure(server: Server) {
  const options = {
    url: `${server.url}/api/public/v1/courses`,
    headers: { authorization: `Bearer ${server.key}` },
    connections: CONNECTIONS,
    ...(RATE ? { overallRate: RATE } : {}),
  };
  await autocannon({ ...options, duration: 3 });
  const before = await cpuMs(server.child.pid!);
  const result = await autocannon({ ...options, duration: ROUND_S });
  const cpu = (await cpuMs(server.child.pid!)) - before;
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuMsPerRequest: cpu / result.requests.total };
}

const dataDir = await mkdtemp(join(tmpdir(), 'tracing-cost-'));
const results: Record<'off' | 'on', Array<Awaited<ReturnType<typeof measure>>>> = { off: [], on: [] };
try {
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const mode of ['off', 'on'] as const) {
      const server = await start(dataDir, mode === 'on');
      try {
        const measured = await measure(server);
        results[mode].push(measured);
        console.error(`round ${round + 1} tracing ${mode}: ${JSON.stringify(measured)}`);
      } finally {
        await stop(server);
      }
    }
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
  sink.close();
}
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
for (const mode of ['off', 'on'] as const) {
  const rows = results[mode];
  console.error(
    `tracing ${mode}: ${mean(rows.map((row) => row.rps)).toFixed(0)} req/s, p50 ${mean(rows.map((row) => row.p50)).toFixed(1)} ms, p99 ${mean(rows.map((row) => row.p99)).toFixed(1)} ms, ` +
      `${mean(rows.map((row) => row.cpuMsPerRequest)).toFixed(3)} ms server CPU per request`,
  );
}
console.error(`exported: ${exports} requests, ${(exportedBytes / 1e6).toFixed(1)} MB`);
