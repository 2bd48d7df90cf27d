/**
 * Measurements one request at a time: cache misses against builds, the statements of one
 * request, sequential timings, and a newcomer's first start.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import getPort from 'get-port';
import { loadConfig } from '../src/config.ts';
import type { Database } from '../src/db/database.ts';
import { median, type MissResult } from './results.ts';
import { cpuSeconds, startArguments, stop, type Served } from './servers.ts';
import { spawn } from 'node:child_process';

/** How long the facade trusts a looked-up key: its production default. */
export const KEY_CACHE_TTL_MS = loadConfig({}).KEY_CACHE_TTL_MS;
/** Sequential misses per endpoint, facade with the cache on and off alternating. */
export const MISSES = 40;

export async function body(url: string, key: string): Promise<string> {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  return response.text();
}

/** A counter or gauge of the facade's /metrics text (0 when it has no sample yet). */
function metricValue(text: string, sample: string): number {
  const line = text.split('\n').find((entry) => entry.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : 0;
}

/**
 * Misses, one request at a time: before every request a change is committed to the workspace
 * (`UPDATE workspaces SET name = name`, by this process), so the facade with the cache on finds no
 * answer of the new data version and builds, checks and stores one; the facade with the cache off
 * gets the same change and builds as it always does. The two alternate, and which goes first too.
 */
export async function measureMisses(db: Database, hits: Served, off: Served, workspaceId: string, path: string, key: string, answer: string): Promise<MissResult> {
  const change = () => db.query('UPDATE workspaces SET name = name WHERE id = $1', [workspaceId]);
  const missSample = `response_cache_answers_total{answer="${answer}",outcome="miss"}`;
  const read = async () => ({
    hits: { statements: await hits.statements(), cpu: await cpuSeconds(hits.child), misses: metricValue(await hits.metrics(), missSample) },
    off: { statements: await off.statements(), cpu: await cpuSeconds(off.child) },
  });
  const before = await read();
  const times = { hits: [] as number[], off: [] as number[] };
  for (let i = 0; i < MISSES; i += 1) {
    for (const server of i % 2 === 0 ? [hits, off] : [off, hits]) {
      await change();
      const started = process.hrtime.bigint();
      await body(`${server.url}${path}`, key);
      times[server.name as 'hits' | 'off'].push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  const after = await read();
  return {
    missMs: median(times.hits),
    offMs: median(times.off),
    ratio: median(times.hits.map((ms, i) => ms / times.off[i]!)),
    missCpuMs: ((after.hits.cpu - before.hits.cpu) * 1000) / MISSES,
    offCpuMs: ((after.off.cpu - before.off.cpu) * 1000) / MISSES,
    missStatements: (after.hits.statements - before.hits.statements) / MISSES,
    offStatements: (after.off.statements - before.off.statements) / MISSES,
    misses: after.hits.misses - before.hits.misses,
    requests: MISSES,
  };
}

/**
 * The statements of one request whose key's cache entry has expired, so that the key lookup is
 * counted too: the most one request of that kind ever sends. `prepare` runs first (a request that
 * caches the answer, or a change that makes the next one a miss).
 */
export async function statementsOfOne(server: Served, path: string, key: string, prepare: () => Promise<unknown> = async () => {}): Promise<number> {
  const counts: number[] = [];
  // The fewer of two: the periodic write of keys' last-used times may fall into one of them.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    await prepare();
    await new Promise((resolve) => setTimeout(resolve, KEY_CACHE_TTL_MS + 100));
    const before = await server.statements();
    await body(`${server.url}${path}`, key);
    counts.push((await server.statements()) - before);
  }
  return Math.min(...counts);
}

export async function medianMs(url: string, key: string, times = 7): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i += 1) {
    const started = process.hrtime.bigint();
    await body(url, key);
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return median(samples);
}

/**
 * A newcomer's `npm start` on an empty data directory: milliseconds from the start of the
 * process to the first 200 from /courses with the demo key it prints.
 */
export async function firstAnswer(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-cold-'));
  const port = await getPort();
  const started = Date.now();
  const child = spawn(process.execPath, await startArguments(), {
    cwd: new URL('..', import.meta.url).pathname,
    env: { PATH: process.env.PATH, DATA_DIR: dir, PORT: String(port), INTERNAL_PORT: String(await getPort()), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  try {
    for (;;) {
      const key = /Key with every scope:\s+(svc_api_\w+)/.exec(out)?.[1];
      if (key) {
        const response = await fetch(`http://127.0.0.1:${port}/api/public/v1/courses`, { headers: { Authorization: `Bearer ${key}` } }).catch(() => null);
        if (response?.status === 200) return Date.now() - started;
      }
      if (Date.now() - started > 60_000) throw new Error('the first start took more than 60 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await stop(child);
    await rm(dir, { recursive: true, force: true });
  }
}
