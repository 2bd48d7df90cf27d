/**
 * Webhook latency: the time from a booking's commit (the writer's statement returning) to the
 * receiver's answer, through a separate `admin -- worker` process with production settings, to an
 * HTTPS receiver in this process: for a burst of 1,000 new bookings in 10 s (booking.created), and
 * for single changes after idle (booking.updated, each after 1 to 3 s without events). On the
 * embedded database always, and on PostgreSQL when DATABASE_URL is set, each a database of its own.
 * On PostgreSQL also the statements one booking update costs, triggers included (auto_explain logs
 * every executed statement, nested ones too), with and without an endpoint subscribed to
 * booking.updated.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { generate } from 'selfsigned';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { importFixture } from '../src/fixtures/import-fixture.ts';
import { addEndpoint } from '../src/webhooks/endpoint-store.ts';
import { SecretBox } from '../src/webhooks/secret-box.ts';
import type { LatencyFigures, StatementCount, WebhookLatencyResults, WebhookLatencyRun } from './results.ts';
import { stop } from './servers.ts';

const ROOT = new URL('..', import.meta.url).pathname;
export const BURST = { bookings: 1_000, seconds: 10 };
export const IDLE_SAMPLES = Number(process.env.BENCH_WEBHOOK_IDLE_SAMPLES ?? 20);
const IDLE_MS: [number, number] = [1_000, 3_000];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function figures(latencies: number[], expected: number): LatencyFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  return { samples: sorted.length, lost: expected - sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? Number.NaN };
}

/** An HTTPS receiver that answers 204 at once and notes when it answered each event, by type and booking. */
async function startReceiver(certificate: { cert: string; key: string }) {
  const answered = new Map<string, number>();
  const waiting = new Map<string, () => void>();
  const server = createServer(certificate, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(204).end();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; data: { booking: { id: string } } };
      const key = `${event.type} ${event.data.booking.id}`;
      if (!answered.has(key)) answered.set(key, performance.now());
      waiting.get(key)?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    answered,
    /** Until the event is answered, at most `timeoutMs`. */
    until: (key: string, timeoutMs: number) =>
      answered.has(key) ? Promise.resolve() : new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        waiting.set(key, () => {
          clearTimeout(timer);
          resolve();
        });
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A separate delivery worker, as `npm run --silent admin -- worker` runs it; resolves once it has started. */
export async function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['dist/src/cli/main.js', 'worker'], { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes('webhook worker started')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the webhook worker exited (${code}): ${seen.slice(-500)}`)));
  });
  child.stdout!.resume();
  return child;
}

export interface Target {
  name: string;
  db: Database;
  env: Record<string, string>;
  close(): Promise<void>;
}

async function embedded(): Promise<Target> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-webhooks-'));
  const db = await openDatabase({ dataDir: dir, shareEmbedded: true, poolSize: 4 });
  return { name: 'embedded PGlite', db, env: { DATA_DIR: dir }, close: async () => (await db.close(), await rm(dir, { recursive: true, force: true })) };
}

export async function postgres(adminUrl: string): Promise<Target> {
  const name = `bench_hooks_${randomBytes(4).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(statement).finally(() => client.end());
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  const db = await openDatabase({ url, poolSize: 4 });
  return { name: 'PostgreSQL', db, env: { DATABASE_URL: url }, close: async () => (await db.close(), await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)) };
}

const INSERT = `WITH booking AS (
    INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'widget', 'pending') RETURNING id
  ), participant AS (
    INSERT INTO participants (booking_id, name, email) SELECT id, 'Bench Person', 'person@bench.example' FROM booking
  )
  SELECT id FROM booking`;
const UPDATE = "UPDATE bookings SET status = CASE WHEN status = 'confirmed' THEN 'cancelled' ELSE 'confirmed' END::booking_status, updated_at = now() WHERE id = $1";

/** Statements one booking update executes, nested ones included, by what they are. */
async function countStatements(url: string, bookingId: string): Promise<StatementCount> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const texts: string[] = [];
  client.on('notice', (notice) => {
    const text = /Query Text: ([\s\S]*)/.exec(notice.message ?? '')?.[1];
    if (text) texts.push(text);
  });
  try {
    await client.query("LOAD 'auto_explain'");
    await client.query("SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = 'notice'");
    await client.query(UPDATE, [bookingId]);
  } finally {
    await client.end();
  }
  const kinds: Record<string, number> = {};
  for (const text of texts) {
    const kind = KINDS.find(([, pattern]) => pattern.test(text))?.[0] ?? 'other';
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return { total: texts.length, kinds };
}

/** What an executed statement is, by its text: the first pattern that matches. */
const KINDS: Array<[string, RegExp]> = [
  ['the UPDATE', /^UPDATE bookings SET status/],
  ['foreign-key checks', /FOR KEY SHARE/],
  ['webhook triggers', /webhook_events|webhook_deliveries|record_bookings_updated_of/],
  ['data version', /data_versions/],
  ['wake-up', /pg_notify/],
];

async function measure(target: Target, certificate: { cert: string; key: string; file: string }, log: (message: string) => void): Promise<WebhookLatencyRun> {
  const { db } = target;
  await migrate(db);
  const { workspaceId, ids } = await importFixture(
    db,
    {
      workspace: { name: 'Bench webhooks' },
      members: [{ ref: 'owner', email: 'owner@hooks.example', name: 'Owner', role: 'owner' }],
      courseTemplates: [{ ref: 't', title: 'Hooks' }],
      courseRuns: [{ ref: 'r', template: 't', status: 'published', sessions: [] }],
      bookings: [],
    },
    {},
  );
  const key = randomBytes(32);
  const receiver = await startReceiver(certificate);
  const endpoint = await addEndpoint(db, new SecretBox(key), {
    workspaceId,
    memberEmail: 'owner@hooks.example',
    url: receiver.url,
    participants: true,
    allowPrivateTargets: true,
    events: ['booking.created', 'booking.updated'],
  });
  const worker = await startWorker({ ...target.env, WEBHOOK_SECRET_KEY: key.toString('base64'), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', NODE_EXTRA_CA_CERTS: certificate.file });
  // Writers of their own, as the platform's are: a burst the database cannot keep up with queues here.
  const writers = new pg.Pool({ connectionString: db.connectionString, max: 4 });
  writers.on('error', () => {});
  const committed = new Map<string, number>();
  const insert = async () => {
    const id = (await writers.query<{ id: string }>(INSERT, [workspaceId, ids.r])).rows[0]!.id;
    committed.set(`booking.created ${id}`, performance.now());
    return id;
  };
  const latencies = (keys: string[]) => keys.flatMap((k) => (receiver.answered.has(k) ? [Math.max(0, receiver.answered.get(k)! - committed.get(k)!)] : []));
  try {
    // Warm-up: the worker's first statements and the first TLS connection.
    for (let i = 0; i < 5; i += 1) await receiver.until(`booking.created ${await insert()}`, 10_000);

    log(`webhooks on ${target.name}: a burst of ${BURST.bookings} bookings in ${BURST.seconds} s`);
    const started = performance.now();
    const writes: Array<Promise<string>> = [];
    for (let i = 0; i < BURST.bookings; i += 1) {
      const due = started + (i * BURST.seconds * 1000) / BURST.bookings;
      if (due > performance.now()) await sleep(due - performance.now());
      writes.push(insert());
    }
    const burstIds = await Promise.all(writes);
    const seconds = (performance.now() - started) / 1000;
    const burstKeys = burstIds.map((id) => `booking.created ${id}`);
    for (const k of burstKeys) await receiver.until(k, Math.max(1, started + 120_000 - performance.now()));
    const burst = { ...figures(latencies(burstKeys), burstKeys.length), seconds };

    log(`webhooks on ${target.name}: ${IDLE_SAMPLES} single changes after idle`);
    const idleKeys: string[] = [];
    for (let i = 0; i < IDLE_SAMPLES; i += 1) {
      await sleep(IDLE_MS[0] + Math.random() * (IDLE_MS[1] - IDLE_MS[0]));
      const id = burstIds[i]!;
      await writers.query(UPDATE, [id]);
      const k = `booking.updated ${id}`;
      committed.set(k, performance.now());
      idleKeys.push(k);
      await receiver.until(k, 10_000);
    }
    const idle = figures(latencies(idleKeys), idleKeys.length);

    let statements: WebhookLatencyRun['statements'] = null;
    if (target.env.DATABASE_URL) {
      const url = target.env.DATABASE_URL;
      await db.query("UPDATE webhook_endpoints SET event_types = '{booking.created}' WHERE id = $1", [endpoint.id]);
      const without = await countStatements(url, burstIds.at(-1)!);
      await db.query("UPDATE webhook_endpoints SET event_types = '{booking.created,booking.updated}' WHERE id = $1", [endpoint.id]);
      statements = { without, with: await countStatements(url, burstIds.at(-2)!) };
    }
    return { database: target.name, burst, idle, statements };
  } finally {
    await stop(worker);
    await writers.end();
    await receiver.close();
  }
}

export async function measureWebhookLatency(log: (message: string) => void): Promise<WebhookLatencyResults> {
  const extensions = [{ name: 'subjectAltName' as const, altNames: [{ type: 7 as const, ip: '127.0.0.1' }] }];
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256', notAfterDate: new Date(Date.now() + 86_400_000), extensions });
  const dir = await mkdtemp(join(tmpdir(), 'bench-webhook-ca-'));
  const certificate = { cert: pems.cert, key: pems.private, file: join(dir, 'receiver.pem') };
  await writeFile(certificate.file, pems.cert);
  const results: WebhookLatencyResults = { runs: [], skipped: [] };
  try {
    const targets: Array<() => Promise<Target>> = [embedded];
    if (process.env.DATABASE_URL) targets.push(() => postgres(process.env.DATABASE_URL!));
    else results.skipped.push('PostgreSQL: DATABASE_URL is not set');
    for (const open of targets) {
      const target = await open();
      try {
        results.runs.push(await measure(target, certificate, log));
      } finally {
        await target.close();
      }
    }
    return results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
