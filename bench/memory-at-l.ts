/**
 * Where the facade's peak RSS at L comes from: one facade (cache hits, `npm start`'s arguments) on
 * a database seeded at L alone, taken through the steps of the bench's L phase, with the peak RSS of
 * each step on its own (the peak is reset before each) and the RSS it leaves behind, split as far as
 * the process tells: files mapped (the node binary), V8's heap, memory outside it. All in MB.
 *
 *   tsx bench/run.ts memory-at-l    (DATABASE_URL for PostgreSQL, else embedded)
 */
import { openBenchDatabase, seed, ENDPOINTS, SIZES } from './database.ts';
import { migrate } from '../src/db/migrate.ts';
import { load, warmUp } from './load.ts';
import type { BenchOptions } from './options.ts';
import { memoryMb, peakRssMb, resetPeakRss, startFacade, stop, type Served } from './servers.ts';
import { body } from './single-requests.ts';

const log = (message: string) => process.stderr.write(`${message}\n`);

/** The process's RSS now and, of it, the pages of files mapped (the node binary's code, mostly), in MB. */
async function rssMb(server: Served): Promise<string> {
  const { VmRSS, RssFile } = await memoryMb(server.child, ['VmRSS', 'RssFile']);
  return `${VmRSS.toFixed(0)} | ${RssFile.toFixed(0)}`;
}

/** V8's heap (total and used) and memory outside it (Buffers), from the facade's /metrics, in MB. */
async function heapMb(server: Served): Promise<string> {
  const text = await server.metrics();
  const of = (name: string) => (Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? Number.NaN) / 2 ** 20).toFixed(0);
  return `${of('nodejs_heap_size_total_bytes')} | ${of('nodejs_heap_size_used_bytes')} | ${of('nodejs_external_memory_bytes')}`;
}

export async function memoryAtL(options: BenchOptions): Promise<void> {
  const database = await openBenchDatabase();
  await migrate(database.db);
  const seeded = await seed(database.db, SIZES.find((size) => size.name === 'L')!);
  await database.db.query('ANALYZE');
  const facade = await startFacade('hits', database.serverEnv);
  const rows: string[] = [`Node ${process.version}, ${database.kind}`, '| step | peak RSS | RSS after | of it, files mapped | V8 heap committed | V8 heap used | outside the heap (Buffers) |', '|---|---|---|---|---|---|---|'];
  const step = async (name: string, run: () => Promise<unknown>) => {
    await resetPeakRss(facade.child);
    await run();
    rows.push(`| ${name} | ${(await peakRssMb(facade.child)).toFixed(0)} | ${await rssMb(facade)} | ${await heapMb(facade)} |`);
    log(rows[rows.length - 1]!);
  };
  try {
    await step('started', async () => {});
    for (const endpoint of ENDPOINTS) {
      await step(`build ${endpoint.label}`, () => body(`${facade.url}${endpoint.path}`, seeded[endpoint.key]));
    }
    const change = () => database.db.query('UPDATE workspaces SET name = name WHERE id = $1', [seeded.workspaceId]);
    await step('rebuild all three after a write', async () => {
      await change();
      for (const endpoint of ENDPOINTS) await body(`${facade.url}${endpoint.path}`, seeded[endpoint.key]);
    });
    for (const endpoint of [ENDPOINTS[0]!, ENDPOINTS[2]!]) {
      await step(`hits under load ${endpoint.label}`, async () => {
        await warmUp(facade, endpoint.path, seeded[endpoint.key], options);
        await load(facade, endpoint.path, seeded[endpoint.key], 'autocannon', options);
      });
    }
    process.stdout.write(`${rows.join('\n')}\n`);
  } finally {
    await stop(facade.child);
    await database.close();
  }
}
