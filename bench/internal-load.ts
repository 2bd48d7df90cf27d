/**
 * Internal GraphQL beside the public API, on PostgreSQL: public /courses and /bookings (the facade
 * with its cache off, so that every request reads the database) loaded by wrk, alone and beside
 * one internal token running the costliest request its budget allows in parallel loops; and the
 * database time a cost point buys, for the cheapest and the costliest shapes of query, measured
 * by PostgreSQL itself (`pg_stat_database.active_time`), not by the service.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createInternalToken } from '../src/auth/internal-token-store.ts';
import { migrate } from '../src/db/migrate.ts';
import type { Database } from '../src/db/database.ts';
import { importFixture } from '../src/fixtures/import-fixture.ts';
import { addBookings } from '../test/support/many-bookings.ts';
import { SIZES, fixtureFor, openBenchDatabase, seed, type BenchDatabase, type Seeded } from './database.ts';
import type { BenchOptions } from './options.ts';
import { median, type InternalLoadResults, type InternalShape, type LatencyRound } from './results.ts';
import { startFacade, stop, type Served } from './servers.ts';

const log = (message: string) => process.stderr.write(`${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The workspace internal teams read: as many bookings as the measurements that opened this work. */
export const INTERNAL_WORKSPACE = { name: 'internal', publishedRuns: 200, sessionsPerRun: 6, draftRuns: 0, cancelledPerRun: 0, bookings: 60_000 } as const;
/** The internal workspace: its runs through the fixture import, its bookings in one statement (importing 60,000 one by one takes minutes). */
export async function seedInternalWorkspace(db: Database): Promise<string> {
  const { workspaceId } = await importFixture(db, fixtureFor({ ...INTERNAL_WORKSPACE, bookings: 0 }), {});
  await addBookings(db, workspaceId, INTERNAL_WORKSPACE.bookings);
  return workspaceId;
}

/** Closed loops of the internal token, as a team's script running its costliest report in parallel would. */
export const INTERNAL_LOOPS = 3;
/** wrk's connections on the public endpoint: a steady neighbour, not a saturating one. */
export const PUBLIC_CONNECTIONS = 4;

const PUBLIC = [
  { label: '/courses', path: '/api/public/v1/courses', key: 'full' as const },
  { label: '/bookings', path: '/api/public/v1/bookings', key: 'limited' as const },
];

/** `n` aliased counts of bookings filtered on a column no index serves, each its own statement (the dates differ). */
export function countsQuery(n: number): string {
  const aliases = Array.from(
    { length: n },
    (_, i) => `c${i}: bookingsConnection(first: 1, filter: { updatedAt: { lt: "2030-01-01T00:00:${String(i).padStart(2, '0')}Z" } }) { totalCount }`,
  );
  return `query Counts($id: ID!) { workspace(id: $id) { ${aliases.join(' ')} } }`;
}

/** The shapes whose database time per point is measured, cheapest first. */
const SHAPES: Array<{ name: string; query: string }> = [
  { name: 'one row by id', query: 'query Name($id: ID!) { workspace(id: $id) { name } }' },
  { name: 'a page of 100 bookings', query: 'query Page($id: ID!) { workspace(id: $id) { bookingsConnection(first: 100) { nodes { id status source createdAt } } } }' },
  {
    name: 'nested pages (20 runs × 20 sessions and 20 bookings)',
    query:
      'query Nested($id: ID!) { workspace(id: $id) { courseRunsConnection(first: 20) { nodes { id sessionsConnection(first: 20) { nodes { id startsAt } } bookingsConnection(first: 20) { nodes { id status } } } } } }',
  },
];

interface Answer {
  status: number;
  retryAfter: number;
  /** What the request spent: `extensions.cost.actual` where the service reports it, else its estimate. */
  charged: number;
}

async function post(internalUrl: string, token: string, query: string, variables: Record<string, unknown>): Promise<Answer> {
  const response = await fetch(`${internalUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { errors?: unknown[]; extensions?: { cost?: { estimate?: number; actual?: number } } };
  const cost = body.extensions?.cost;
  if (response.status === 200 && body.errors) throw new Error(`internal query answered with errors: ${JSON.stringify(body.errors).slice(0, 300)}`);
  return { status: response.status, retryAfter: Number(response.headers.get('retry-after') ?? 0), charged: cost?.actual ?? cost?.estimate ?? 0 };
}

/** The most aliased counts the service accepts (runs or asks to wait), from the alias limit down. */
async function costliestAccepted(internalUrl: string, token: string, workspaceId: string): Promise<{ aliases: number; query: string }> {
  for (let n = 15; n >= 1; n -= 1) {
    const answer = await post(internalUrl, token, countsQuery(n), { id: workspaceId });
    if (answer.status === 200 || answer.status === 429) return { aliases: n, query: countsQuery(n) };
  }
  throw new Error('no count of bookings is accepted');
}

/** Loops that send `query` until stopped, waiting at most a second when asked to wait; what they got, by status. */
function internalLoops(internalUrl: string, token: string, query: string, variables: Record<string, unknown>) {
  let running = true;
  const statuses: Record<string, number> = {};
  const loops = Array.from({ length: INTERNAL_LOOPS }, async () => {
    while (running) {
      const answer = await post(internalUrl, token, query, variables);
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      if (answer.status === 429) await sleep(Math.min(1, Math.max(0.1, answer.retryAfter)) * 1000);
      else if (answer.status !== 200) await sleep(100);
    }
  });
  return {
    statuses,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** wrk's p50 and p99 of `path`, ms. */
async function wrkLatency(url: string, key: string, seconds: number): Promise<{ p50: number; p99: number; requests: number }> {
  const { stdout } = await promisify(execFile)('/usr/bin/wrk', ['-t1', `-c${PUBLIC_CONNECTIONS}`, `-d${seconds}s`, '--latency', '-H', `Authorization: Bearer ${key}`, url]);
  const ms = (text: string) => {
    const [, value, unit] = /^([\d.]+)(us|ms|s)$/.exec(text.trim()) ?? [];
    return Number(value) * ({ us: 0.001, ms: 1, s: 1000 }[unit as 'us' | 'ms' | 's'] ?? Number.NaN);
  };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  if (non2xx > 0) throw new Error(`${url} answered ${non2xx} non-2xx responses`);
  return { p50: ms(/^\s+50%\s+(\S+)/m.exec(stdout)?.[1] ?? ''), p99: ms(/^\s+99%\s+(\S+)/m.exec(stdout)?.[1] ?? ''), requests: Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0) };
}

/** Milliseconds PostgreSQL has spent executing statements in this database, as its statistics say. */
async function activeMs(db: Database): Promise<number> {
  await db.query('SELECT pg_stat_clear_snapshot()');
  return Number((await db.query<{ ms: number }>('SELECT active_time AS ms FROM pg_stat_database WHERE datname = current_database()')).rows[0]!.ms);
}

/** Backends report their statistics once idle for a second; this waits for that, then reads. */
const settledActiveMs = async (db: Database) => {
  await sleep(2_500);
  return activeMs(db);
};

/** Database time per point of one shape: `requests` of it in a row, against what they were charged. */
async function timePerPoint(database: BenchDatabase, internalUrl: string, token: string, name: string, query: string, workspaceId: string, seconds: number): Promise<InternalShape> {
  // The same wait with nothing sent: what the database does meanwhile by itself (it should be nothing).
  const idleBefore = await settledActiveMs(database.db);
  const before = await settledActiveMs(database.db);
  let charged = 0;
  let requests = 0;
  const started = Date.now();
  while (Date.now() - started < seconds * 1000) {
    const answer = await post(internalUrl, token, query, { id: workspaceId });
    if (answer.status !== 200) throw new Error(`${name} answered ${answer.status}`);
    charged += answer.charged;
    requests += 1;
  }
  const databaseMs = (await settledActiveMs(database.db)) - before;
  return { name, requests, points: charged, databaseMs, idleMs: before - idleBefore, secondsPer100k: charged > 0 ? databaseMs / 1000 / (charged / 100_000) : Number.NaN };
}

export async function measureInternalLoad(options: Pick<BenchOptions, 'rounds' | 'duration'>): Promise<InternalLoadResults | null> {
  if (!process.env.DATABASE_URL) {
    log('internal load: DATABASE_URL is not set, not measured (it is measured on PostgreSQL)');
    return null;
  }
  const database = await openBenchDatabase();
  const { db } = database;
  let facade: Served | null = null;
  try {
    await migrate(db);
    const publicSide: Seeded = await seed(db, SIZES.find((size) => size.name === 'M')!);
    const started = Date.now();
    const workspaceId = await seedInternalWorkspace(db);
    log(`internal load: seeded the internal workspace (${INTERNAL_WORKSPACE.bookings} bookings) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    facade = await startFacade('off', database.serverEnv);
    const internalUrl = facade.internalUrl;
    const costly = await createInternalToken(db, { name: 'bench-costly' });
    const unbounded = await createInternalToken(db, { name: 'bench-unbounded', costPerMinute: 1_000_000_000 });
    const costliest = await costliestAccepted(internalUrl, unbounded.token, workspaceId);
    log(`internal load: the costliest accepted request counts bookings ${costliest.aliases} times`);

    const shapes: InternalShape[] = [];
    for (const shape of [...SHAPES, { name: `${costliest.aliases} aliased counts of bookings filtered on updatedAt`, query: costliest.query }]) {
      log(`internal load: database time per point, ${shape.name}`);
      shapes.push(await timePerPoint(database, internalUrl, unbounded.token, shape.name, shape.query, workspaceId, options.duration * 2));
    }

    const rounds: LatencyRound[] = [];
    const statuses: Record<string, number> = {};
    for (const endpoint of PUBLIC) {
      const url = `${facade.url}${endpoint.path}`;
      const key = publicSide[endpoint.key];
      await wrkLatency(url, key, 2);
      for (let round = 0; round < options.rounds; round += 1) {
        const alone = await wrkLatency(url, key, options.duration);
        const loops = internalLoops(internalUrl, costly.token, costliest.query, { id: workspaceId });
        await sleep(1_000);
        const beside = await wrkLatency(url, key, options.duration);
        await loops.stop();
        for (const [status, count] of Object.entries(loops.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
        rounds.push({ endpoint: endpoint.label, alone, beside });
        log(`internal load: ${endpoint.label} p50 ${alone.p50.toFixed(1)} → ${beside.p50.toFixed(1)} ms, p99 ${alone.p99.toFixed(1)} → ${beside.p99.toFixed(1)} ms; internal ${JSON.stringify(loops.statuses)}`);
      }
    }
    const ratio = (endpoint: string, pick: 'p50' | 'p99') => median(rounds.filter((round) => round.endpoint === endpoint).map((round) => round.beside[pick] / round.alone[pick]));
    log(`internal load: /courses p50 ×${ratio('/courses', 'p50').toFixed(2)} p99 ×${ratio('/courses', 'p99').toFixed(2)}; /bookings p50 ×${ratio('/bookings', 'p50').toFixed(2)} p99 ×${ratio('/bookings', 'p99').toFixed(2)}`);
    return { costliest: costliest.aliases, loops: INTERNAL_LOOPS, publicConnections: PUBLIC_CONNECTIONS, duration: options.duration, rounds, internalStatuses: statuses, shapes };
  } finally {
    if (facade) await stop(facade.child);
    await database.close();
  }
}
