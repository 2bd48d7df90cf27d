/**
 * Where a cache hit's CPU time goes, part by part: the facade started as `npm start` with
 * `--cpu-prof`, loaded with cache hits of one endpoint, its profile's busy samples attributed to
 * the parts of a hit by the file of each function (self time), each part's share then turned into
 * µs of the CPU a hit costs. Each part says what floor it was taken to, or why it stays above it.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, warmUp } from './load.ts';
import type { BenchOptions } from './options.ts';
import type { Generator, HitPart, HitProfile } from './results.ts';
import { startFacade, stop } from './servers.ts';

interface ProfileNode {
  callFrame: { functionName: string; url: string };
  hitCount: number;
}

/** The part of a hit that holds the key's activity and with it the request log. */
export const KEY_ACTIVITY_PART = 'the key’s allow list and activity (last use, request log, daily counts)';

/** The parts of a hit: which functions belong to each (by file, or name for V8's own), and its floor. */
const PARTS: Array<{ part: string; of: RegExp; floor: string }> = [
  { part: 'garbage collection', of: /^\(garbage collector\)/, floor: 'the young generation collecting what each request made; the fewer objects a hit makes, the less' },
  {
    part: 'request state, route and request id',
    of: /rest\/pipeline\/(dispatch|request-state|route-table|compose)\.js|node:internal\/crypto\/random/,
    floor: 'one map lookup finds the route, one object holds the state, the request id is one of Node’s buffered UUIDs',
  },
  {
    part: KEY_ACTIVITY_PART,
    of: /rest\/steps\/allowed-address\.js|src\/auth\/(key-activity|key-activity-store|key-policy)\.js/,
    floor: 'one comparison for a key without an allow list; a map lookup and a few counts per request, a row only for the first 100 requests of a key in a second, written in batches off the request path',
  },
  {
    part: 'authentication',
    of: /rest\/steps\/authenticate\.js|src\/auth\/|lru-cache|node:internal\/crypto\/hash/,
    floor: 'a key verified in this process within the key cache’s time is found by its Authorization value: no parsing, checksum or SHA-256 again',
  },
  {
    part: 'the key’s rate limit',
    of: /rest\/steps\/key-rate-limit\.js|src\/rate-limit\/|rate-limiter-flexible/,
    floor: 'the in-memory window counts in place and allocates nothing; what is left is the RateLimit header’s text',
  },
  { part: 'scope and query string', of: /rest\/steps\/(scope|no-query|read-only)\.js/, floor: 'a set lookup and whether the target had a `?`' },
  {
    part: 'answer cache and data version read',
    of: /src\/answer-cache\/|src\/flights\.js|src\/(db|model|sql)\/|node_modules\/pg|node_modules\/pg-/,
    floor: 'one version read shared by the hits of a turn of the event loop (exactness asks one per turn); the answer’s key made once per key',
  },
  { part: 'headers and body', of: /rest\/pipeline\/answers\.js|rest\/routes\//, floor: 'the status and every header in one call (writeHead), the cached bytes as they are' },
  {
    part: 'log line',
    of: /rest\/pipeline\/request-log\.js|src\/logger\.js|pino|sonic-boom|node:fs|writeString/,
    floor: 'built from parts serialised once per route and key; written to pino’s own destination, no redaction pass',
  },
  {
    part: 'metrics',
    of: /src\/observability\/|prom-client/,
    floor: 'counters counted in place; above its floor: the duration histogram stays prom-client’s, which takes buckets only from its own observations',
  },
  { part: 'express (one layer)', of: /node_modules\/(express|router|parseurl|finalhandler|encodeurl|statuses)\//, floor: 'one layer, as the express reference has' },
  {
    part: 'node:http (parser, headers, socket writes)',
    of: /^node:|^\(program\)|writev|writeUtf8String|writeBuffer|runMicrotasks|^$/,
    floor: 'Node’s own; the bare and express references pay it too',
  },
];

function partOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  const where = url || functionName;
  return PARTS.find((entry) => entry.of.test(where) || entry.of.test(functionName))?.part ?? 'other';
}

/** Busy samples by part, from the profile V8 wrote into `dir`. */
async function sharesOf(dir: string): Promise<Map<string, number>> {
  const file = (await readdir(dir)).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error('the facade wrote no CPU profile');
  const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as { nodes: ProfileNode[] };
  const byPart = new Map<string, number>();
  let busy = 0;
  for (const node of profile.nodes) {
    if (node.callFrame.functionName === '(idle)') continue;
    busy += node.hitCount;
    const part = partOf(node);
    byPart.set(part, (byPart.get(part) ?? 0) + node.hitCount);
  }
  return new Map([...byPart].map(([part, hits]) => [part, hits / busy]));
}

/**
 * Profiles cache hits of `path` on a facade of its own and splits a hit's CPU into the parts;
 * `cpuUs`, when given, is the CPU per hit measured without the profiler (the load phase's).
 */
export async function profileHits(
  serverEnv: Record<string, string>,
  endpoint: { label: string; path: string },
  key: string,
  options: Pick<BenchOptions, 'duration' | 'warmup' | 'connections'>,
  generator: Generator,
  cpuUs?: number,
): Promise<HitProfile> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-profile-'));
  const facade = await startFacade('hits', serverEnv, undefined, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  let result;
  try {
    await warmUp(facade, endpoint.path, key, options);
    result = await load(facade, endpoint.path, key, generator, options);
  } finally {
    await stop(facade.child);
  }
  try {
    const shares = await sharesOf(dir);
    const perHit = cpuUs ?? result.cpuMs * 1000;
    const parts: HitPart[] = [...PARTS.map((entry) => entry.part), 'other']
      .map((part) => ({ part, share: shares.get(part) ?? 0, us: (shares.get(part) ?? 0) * perHit, floor: PARTS.find((entry) => entry.part === part)?.floor ?? 'what no part above names' }))
      .filter((part) => part.share > 0);
    return { endpoint: endpoint.label, generator, rps: result.rps, cpuUs: perHit, parts };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
