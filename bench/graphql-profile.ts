/**
 * `tsx bench/run.ts graphql-profile [--endpoint Q1]`: where internal GraphQL's CPU goes on Q1–Q3
 * (bench/graphql-queries.ts), phase by phase. The service is started as `npm start` runs it with
 * `--cpu-prof` and NODE_ENV=production, warmed up and loaded by autocannon; each busy sample of
 * its profile goes to the phase of its nearest caller that has one (its own function, else its
 * caller's, and so on up the stack), and the phases are printed as shares and as ms per request.
 * The profiler's own cost and the start-up are in the figures: the shares are what compares.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { migrate } from '../src/db/migrate.ts';
import { importFixture } from '../src/fixtures/import-fixture.ts';
import { SIZES, fixtureFor, openBenchDatabase, seed } from './database.ts';
import { QUERIES, RUNS_WORKSPACE } from './graphql-queries.ts';
import type { BenchOptions } from './options.ts';
import { POSTGRAPHILE_CONNECTIONS } from './postgraphile.ts';
import { INTERNAL_TOKEN, startFacade, stop } from './servers.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber?: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = new Set(['(idle)', '(program)']);

/** The phases, each by the function names or file of the frames that belong to it; the first that matches wins. */
const PHASES: Array<[phase: string, of: (name: string, url: string) => boolean]> = [
  ['garbage collection', (name) => name === '(garbage collector)'],
  // A socket write is the phase of who writes: the answer (node:_http_outgoing), a statement (pg) or a log line.
  ['serialisation (JSON.stringify, answer writes)', (name, url) => name === 'prettyJSONStringify' || /_http_outgoing/.test(url)],
  ['parse and validate', (name, url) => /graphql\/language|graphql\/validation|graphql-armor/.test(url)],
  [
    'planning (size and cost estimate, personal-data check, field usage, statement plans)',
    (name, url) => /graphql-query-complexity|work\/estimate|document-size|personal-data-grant|field-usage|table-statistics|list-scans|selection\.js|statement-shape|connection-arguments/.test(url),
  ],
  ['row decoding (pg-types, row objects, grouping by parent)', (name, url) => /pg-types|postgres-array|loaders\/statements\.js/.test(url) || name === 'parseDataRowMessage'],
  ['SQL (driver, protocol, statement writes)', (name, url) => /node_modules\/(pg|pg-protocol|pg-pool)\/|src\/(db|model|sql)\//.test(url)],
  ['resolvers, execution, DataLoader scheduling', (name, url) => /graphql-jit|dataloader|graphql\/execution|src\/loaders\/|src\/graphql\//.test(url) || url === ''],
  ['HTTP, express, Apollo Server request pipeline, log', (name, url) => /express|router|body-parser|@apollo|_http_|pino|sonic-boom|src\/logger|src\/internal-api\/|crypto|rate-limiter/.test(url)],
];
const OTHER = 'other (start-up, timers)';

export function phasesOf(profile: Profile): Map<string, number> {
  const parent = new Map<number, ProfileNode>();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const phaseOf = new Map<number, string | null>();
  const classify = (id: number): string | null => {
    let node = byId.get(id);
    if (node && IDLE.has(node.callFrame.functionName)) return null;
    while (node) {
      // A native function (no script, no line: a socket write, a string decoding) is its caller's phase; code
      // compiled at run time (graphql-jit's) has no script but a line.
      const native = node.callFrame.url === '' && (node.callFrame.lineNumber ?? -1) < 0 && node.callFrame.functionName !== '(garbage collector)';
      const match = native ? undefined : PHASES.find(([, of]) => of(node!.callFrame.functionName, node!.callFrame.url));
      if (match) return match[0];
      node = parent.get(node.id);
    }
    return OTHER;
  };
  const micros = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    if (!phaseOf.has(id)) phaseOf.set(id, classify(id));
    const phase = phaseOf.get(id);
    if (phase) micros.set(phase, (micros.get(phase) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  return micros;
}

export async function profileGraphql(options: Pick<BenchOptions, 'duration' | 'warmup' | 'endpoint'>): Promise<string[]> {
  const names = QUERIES.some((query) => query.name === options.endpoint) ? [options.endpoint] : QUERIES.map((query) => query.name);
  const database = await openBenchDatabase();
  const lines = [`Node ${process.version}: where internal GraphQL's CPU goes (busy samples; ms per request include the profiler's cost)`];
  try {
    await migrate(database.db);
    const m = await seed(database.db, SIZES.find((size) => size.name === 'M')!);
    const runs = await importFixture(database.db, fixtureFor(RUNS_WORKSPACE), {});
    await database.db.query('ANALYZE');
    for (const query of QUERIES.filter((candidate) => names.includes(candidate.name))) {
      const dir = await mkdtemp(join(tmpdir(), 'bench-graphql-profile-'));
      const facade = await startFacade('off', { ...database.serverEnv, NODE_ENV: 'production', INTERNAL_COST_PER_MINUTE: '1000000000' }, undefined, ['--cpu-prof', '--cpu-prof-dir', dir]);
      const body = JSON.stringify({ query: query.service, variables: { id: query.workspace === 'M' ? m.workspaceId : runs.workspaceId } });
      const load = { url: `${facade.internalUrl}/graphql`, method: 'POST' as const, headers: { 'content-type': 'application/json', authorization: `Bearer ${INTERNAL_TOKEN}` }, body, connections: POSTGRAPHILE_CONNECTIONS };
      const requests = (await autocannon({ ...load, duration: options.warmup })).requests.total + (await autocannon({ ...load, duration: options.duration })).requests.total;
      await stop(facade.child);
      const [file] = await readdir(dir);
      const phases = phasesOf(JSON.parse(await readFile(join(dir, file!), 'utf8')) as Profile);
      await rm(dir, { recursive: true, force: true });
      const busy = [...phases.values()].reduce((sum, us) => sum + us, 0);
      lines.push('', `${query.name} (${query.what}): ${requests} requests`);
      for (const [phase, us] of [...phases].sort((a, b) => b[1] - a[1])) {
        lines.push(`${((us / busy) * 100).toFixed(1).padStart(5)} %  ${(us / 1000 / requests).toFixed(2).padStart(6)} ms  ${phase}`);
      }
    }
    return lines;
  } finally {
    await database.close();
  }
}
