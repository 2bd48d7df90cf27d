/**
 * Webhook isolation and throughput on PostgreSQL, through one `admin -- worker` process with the
 * production settings (15 s attempt timeout, WEBHOOK_CONCURRENCY and the per-endpoint and
 * per-workspace bounds at their defaults):
 * - noisy neighbours: 1, then 10 workspaces whose receivers accept and never answer get 60 bookings
 *   each at once; a second later workspace B, whose receiver answers 204 at once, gets 20 bookings,
 *   one every 250 ms; B's latency from commit to its receiver;
 * - throughput: bursts of 10,000 bookings across 100 endpoints (100 workspaces, 100 receivers that
 *   answer at once), each burst committed at once (one transaction), deliveries per second from its
 *   commit to the last answer, against a bare Node HTTPS client with keep-alive posting the same
 *   signed requests to the same receivers with the same concurrency, in the same run. Both sides
 *   start with the 10,000 requests to make and nothing else: the bookings' writing is not the
 *   deliveries' (timed from the first write too, for the record, but not compared).
 */
import { randomBytes } from 'node:crypto';
import { Agent, createServer, request, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { generate } from 'selfsigned';
import { loadConfig } from '../src/config.ts';
import { migrate } from '../src/db/migrate.ts';
import { importFixture } from '../src/fixtures/import-fixture.ts';
import { addEndpoint } from '../src/webhooks/endpoint-store.ts';
import { SecretBox } from '../src/webhooks/secret-box.ts';
import type { WebhookIsolationResults } from './results.ts';
import { stop } from './servers.ts';
import { postgres, startWorker, type Target } from './webhook-latency.ts';

export const NOISY = { bookingsEach: 60, quietBookings: 20, quietEveryMs: 250, tenants: [1, 10] };
export const THROUGHPUT = { bookings: 10_000, endpoints: 100, rounds: Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 3) };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
};

interface Captured {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** An HTTPS receiver: `hang` accepts and never answers; otherwise 204 at once, noting when each booking arrived. */
async function receiver(certificate: { cert: string; key: string }, hang: boolean) {
  const arrived = new Map<string, number>();
  const captured: Captured[] = [];
  let count = 0;
  const server: Server = createServer(certificate, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (hang) return;
      res.writeHead(204).end();
      count += 1;
      const body = Buffer.concat(chunks);
      if (req.headers['webhook-id']) {
        const event = JSON.parse(body.toString('utf8')) as { data: { booking: { id: string } } };
        if (!arrived.has(event.data.booking.id)) arrived.set(event.data.booking.id, performance.now());
        captured.push({ headers: req.headers, body });
      }
    });
  });
  // Connections stay open between the rounds (Node closes idle ones after 5 s by default).
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrived,
    captured,
    get count() {
      return count;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
type Receiver = Awaited<ReturnType<typeof receiver>>;

async function workspace(target: Target, box: SecretBox, name: string, url: string) {
  const { workspaceId, ids } = await importFixture(
    target.db,
    {
      workspace: { name },
      members: [{ ref: 'owner', email: `owner@${name}.example`, name: 'Owner', role: 'owner' }],
      courseTemplates: [{ ref: 't', title: 'Hooks' }],
      courseRuns: [{ ref: 'r', template: 't', status: 'published', sessions: [] }],
      bookings: [],
    },
    {},
  );
  await addEndpoint(target.db, box, { workspaceId, memberEmail: `owner@${name}.example`, url, participants: false, allowPrivateTargets: true });
  return { workspaceId, runId: ids.r! };
}

const INSERT = `INSERT INTO bookings (workspace_id, course_run_id, source, status) SELECT $1, $2, 'widget', 'confirmed' FROM generate_series(1, $3) RETURNING id`;

/** The bare client: the captured requests, posted again with keep-alive and `concurrency` at once. */
async function bare(requests: Array<Captured & { url: string }>, concurrency: number, ca: string): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64, ca });
  let next = 0;
  const started = performance.now();
  const post = ({ url, headers, body }: Captured & { url: string }) =>
    new Promise<void>((resolve, reject) => {
      const sent = Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'host' && name !== 'connection')) as Record<string, string>;
      const req = request(url, { method: 'POST', agent, headers: sent }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const sent = requests[next++]!;
        // A pooled connection the receiver closed meanwhile: once more, as the worker's sender does.
        await post(sent).catch(() => post(sent));
      }
    }),
  );
  agent.destroy();
  return requests.length / ((performance.now() - started) / 1000);
}

async function run(target: Target, certificate: { cert: string; key: string; file: string }, log: (message: string) => void): Promise<Omit<WebhookIsolationResults, 'skipped'>> {
  await migrate(target.db);
  const key = randomBytes(32);
  const box = new SecretBox(key);
  const writers = new pg.Pool({ connectionString: target.db.connectionString, max: 4 });
  writers.on('error', () => {});
  const receivers: Receiver[] = [];
  const open = async (hang: boolean) => {
    const made = await receiver(certificate, hang);
    receivers.push(made);
    return made;
  };
  const worker = await startWorker({ ...target.env, WEBHOOK_SECRET_KEY: key.toString('base64'), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', NODE_EXTRA_CA_CERTS: certificate.file });
  const results: Omit<WebhookIsolationResults, 'skipped'> = { noisy: [], throughput: { worker: [], bare: [], fromFirstWrite: [], writeSeconds: [], concurrency: loadConfig({}).WEBHOOK_CONCURRENCY } };
  try {
    const hanging = await open(true);
    const noisy: Array<{ workspaceId: string; runId: string }> = [];
    for (const tenants of NOISY.tenants) {
      while (noisy.length < tenants) noisy.push(await workspace(target, box, `noisy${noisy.length}`, hanging.url));
      const quietReceiver = await open(false);
      const quiet = await workspace(target, box, `quiet${tenants}`, quietReceiver.url);
      log(`webhook isolation: B beside ${tenants} hanging tenant(s), ${NOISY.bookingsEach} bookings each`);
      for (const tenant of noisy.slice(0, tenants)) await writers.query(INSERT, [tenant.workspaceId, tenant.runId, NOISY.bookingsEach]);
      await sleep(1000);
      const committed = new Map<string, number>();
      for (let i = 0; i < NOISY.quietBookings; i += 1) {
        const [row] = (await writers.query<{ id: string }>(INSERT, [quiet.workspaceId, quiet.runId, 1])).rows;
        committed.set(row!.id, performance.now());
        await sleep(NOISY.quietEveryMs);
      }
      const deadline = performance.now() + 90_000;
      while (quietReceiver.arrived.size < committed.size && performance.now() < deadline) await sleep(50);
      const latencies = [...committed].flatMap(([id, at]) => (quietReceiver.arrived.has(id) ? [quietReceiver.arrived.get(id)! - at] : []));
      results.noisy.push({ hanging: tenants, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: Math.max(...latencies), answered: latencies.length, expected: committed.size });
      log(`webhook isolation: ${JSON.stringify(results.noisy.at(-1))}`);
      // The hanging tenants' endpoints are removed before the next step: their deliveries stop.
      await target.db.query("UPDATE webhook_endpoints SET removed_at = now() WHERE url = $1", [hanging.url]);
      await target.db.query("UPDATE webhook_deliveries d SET state = 'cancelled', next_attempt_at = NULL FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND e.removed_at IS NOT NULL AND d.state = 'pending'");
      noisy.length = 0;
    }
    // Their attempts in flight end within the timeout; the throughput bursts start after.
    await sleep(16_000);

    const fast: Array<{ workspaceId: string; runId: string; receiver: Receiver }> = [];
    for (let i = 0; i < THROUGHPUT.endpoints; i += 1) {
      const made = await open(false);
      fast.push({ ...(await workspace(target, box, `fast${i}`, made.url)), receiver: made });
    }
    const perEndpoint = THROUGHPUT.bookings / THROUGHPUT.endpoints;
    for (let round = 0; round < THROUGHPUT.rounds; round += 1) {
      log(`webhook throughput: round ${round + 1} of ${THROUGHPUT.rounds}, ${THROUGHPUT.bookings} bookings across ${THROUGHPUT.endpoints} endpoints`);
      const before = fast.reduce((sum, f) => sum + f.receiver.count, 0);
      for (const f of fast) f.receiver.captured.length = 0;
      const started = performance.now();
      // One statement per workspace, in one transaction: every endpoint has all its work at its commit.
      const writer = await writers.connect();
      try {
        await writer.query('BEGIN');
        for (const f of fast) await writer.query(INSERT, [f.workspaceId, f.runId, perEndpoint]);
        await writer.query('COMMIT');
      } finally {
        writer.release();
      }
      const committed = performance.now();
      const deadline = committed + 120_000;
      while (fast.reduce((sum, f) => sum + f.receiver.count, 0) - before < THROUGHPUT.bookings && performance.now() < deadline) await sleep(20);
      const delivered = fast.reduce((sum, f) => sum + f.receiver.count, 0) - before;
      const ended = performance.now();
      results.throughput.worker.push(delivered / ((ended - committed) / 1000));
      results.throughput.fromFirstWrite.push(delivered / ((ended - started) / 1000));
      results.throughput.writeSeconds.push((committed - started) / 1000);
      const requests = fast.flatMap((f) => f.receiver.captured.map((c) => ({ ...c, url: f.receiver.url })));
      // Interleaved across receivers, as the worker's attempts were.
      requests.sort((a, b) => String(a.headers['webhook-id']).localeCompare(String(b.headers['webhook-id'])));
      results.throughput.bare.push(await bare(requests, results.throughput.concurrency, certificate.cert));
      log(`webhook throughput: ${Math.round(results.throughput.worker.at(-1)!)}/s through the worker from the commit (${Math.round(results.throughput.fromFirstWrite.at(-1)!)}/s from the first write, written in ${results.throughput.writeSeconds.at(-1)!.toFixed(1)} s), ${Math.round(results.throughput.bare.at(-1)!)}/s bare`);
    }
    return results;
  } finally {
    await stop(worker);
    await writers.end();
    for (const made of receivers) await made.close();
  }
}

export async function measureWebhookIsolation(log: (message: string) => void): Promise<WebhookIsolationResults> {
  if (!process.env.DATABASE_URL) return { noisy: [], throughput: { worker: [], bare: [], fromFirstWrite: [], writeSeconds: [], concurrency: 0 }, skipped: 'DATABASE_URL is not set' };
  const extensions = [{ name: 'subjectAltName' as const, altNames: [{ type: 7 as const, ip: '127.0.0.1' }] }];
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256', notAfterDate: new Date(Date.now() + 86_400_000), extensions });
  const dir = await mkdtemp(join(tmpdir(), 'bench-webhook-isolation-'));
  const certificate = { cert: pems.cert, key: pems.private, file: join(dir, 'receiver.pem') };
  await writeFile(certificate.file, pems.cert);
  const target = await postgres(process.env.DATABASE_URL);
  try {
    return { ...(await run(target, certificate, log)), skipped: null };
  } finally {
    await target.close();
    await rm(dir, { recursive: true, force: true });
  }
}
