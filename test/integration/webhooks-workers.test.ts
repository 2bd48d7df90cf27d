import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { capturedLogs } from '../support/public-api.ts';
import { openTestDatabase } from '../support/databases.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startServerProcess, startWorkerProcess, type ServerProcess, type WorkerProcess } from '../support/server-process.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { bookingOf, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

interface Delivery {
  eventId: string;
  state: string;
  log: Array<{ httpStatus: number | null }>;
}

describeOnEachDatabase('webhook workers as separate processes on %s', (target) => {
  let db: Database;
  let ws: SeededWorkspace;
  let receiver: WebhookReceiver;
  let endpointId: string;
  let dataDir: string | null = null;
  let server: ServerProcess | null = null;
  const workers: WorkerProcess[] = [];
  const env = webhookEnv({ WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_CONCURRENCY: '3' });
  let processEnv: Record<string, string>;

  const insertBookings = async (count: number): Promise<string[]> =>
    (
      await db.query<{ id: string }>(
        `INSERT INTO bookings (workspace_id, course_run_id, source, status) SELECT $1, $2, 'widget', 'confirmed' FROM generate_series(1, $3) RETURNING id`,
        [ws.workspaceId, ws.ids.r1, count],
      )
    ).rows.map((row) => row.id);
  const deliveries = async () => cliOn(db, env).json<Delivery[]>('webhook', 'deliveries', '--endpoint', endpointId);
  const startWorker = async () => {
    const worker = await startWorkerProcess(processEnv);
    workers.push(worker);
    return worker;
  };

  beforeAll(async () => {
    receiver = await startReceiver();
    if (target === 'embedded') {
      // The embedded database lives in the server's process; workers and this test reach it through its socket.
      dataDir = await mkdtemp(join(tmpdir(), 'webhook-workers-'));
      // No WEBHOOK_SECRET_KEY: the embedded server generates one into its data directory, where
      // the separate workers (and, here, the test's CLI) find it.
      const { WEBHOOK_SECRET_KEY: _unused, ...withoutKey } = env;
      processEnv = { ...withoutKey, DATA_DIR: dataDir, NODE_EXTRA_CA_CERTS: receiver.certificateFile };
      server = await startServerProcess({ ...processEnv, WEBHOOK_WORKER: 'false' });
      const keyFile = join(dataDir, 'webhook-secret-key');
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      env.WEBHOOK_SECRET_KEY = (await readFile(keyFile, 'utf8')).trim();
      db = await openDatabase({ dataDir });
    } else {
      db = await openTestDatabase(target);
      processEnv = { ...env, DATABASE_URL: db.connectionString, NODE_EXTRA_CA_CERTS: receiver.certificateFile };
    }
    ws = await seedWorkspace(db, contractFixture('Workers', 1));
    endpointId = (await cliOn(db, env).json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url)).id;
  });
  afterAll(async () => {
    for (const worker of workers) {
      await worker.kill();
      capturedLogs.push(...worker.output().split('\n'));
    }
    if (server) capturedLogs.push(...server.output().split('\n'));
    await db?.close();
    await server?.stop();
    await receiver?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('webhooks.guarantee: after a worker is killed in the middle of deliveries and a new one starts, every event is still delivered', async () => {
    receiver.answer = () => ({ status: 204, delayMs: 300 });
    const first = await startWorker();
    const booked = await insertBookings(20);
    await receiver.waitFor((received) => received.length >= 4);
    await first.kill();
    const seenByTheFirst = new Set(receiver.received.map((d) => bookingOf(d).id));
    expect(seenByTheFirst.size).toBeLessThan(booked.length);

    await startWorker();
    await expect
      .poll(async () => (await deliveries()).filter((d) => d.state === 'succeeded').length, { timeout: 40_000, interval: 500 })
      .toBe(booked.length);
    expect(new Set(receiver.received.map((d) => bookingOf(d).id))).toEqual(new Set(booked));
  });

  it('webhooks.schedule: with two workers at once, no event and endpoint ever gets two attempts at the same time', async () => {
    await startWorker();
    const before = receiver.received.length;
    // The first attempt of each event fails slowly, so that a second attempt would overlap it if it could.
    receiver.answer = (delivery) =>
      receiver.received.filter((d) => d.headers['webhook-id'] === delivery.headers['webhook-id']).length === 1 ? { status: 503, delayMs: 200 } : { status: 204, delayMs: 100 };
    // Which worker claims a delivery is the database's timing: batches go on until both have attempted some (at most five).
    const running = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    expect(running).toHaveLength(2);
    const bothAttempted = () => running.every((worker) => /"msg":"webhook attempt"/.test(worker.output()));
    const booked: string[] = [];
    for (let batch = 0; batch < 5 && (batch === 0 || !bothAttempted()); batch += 1) {
      booked.push(...(await insertBookings(30)));
      await expect
        .poll(async () => (await deliveries()).filter((d) => d.state === 'succeeded').length, { timeout: 40_000, interval: 500 })
        .toBe(20 + booked.length);
    }
    const received = receiver.received.slice(before);
    expect(received.filter((d) => d.overlapping > 0)).toEqual([]);
    const eventIds = new Set(received.filter((d) => booked.includes(bookingOf(d).id)).map((d) => String(d.headers['webhook-id'])));
    expect(eventIds.size).toBe(booked.length);
    const logs = (await deliveries()).filter((d) => eventIds.has(d.eventId));
    expect(logs).toHaveLength(booked.length);
    for (const delivery of logs) expect(delivery.log.map((a) => a.httpStatus)).toEqual([503, 204]);
    // Both workers took part.
    for (const worker of running) expect(worker.output()).toMatch(/"msg":"webhook attempt"/);
  });

  it('admin -- worker stops cleanly on SIGTERM', async () => {
    for (const worker of workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null)) {
      expect(await worker.stop()).toBe(0);
      expect(worker.output()).toContain('webhook worker stopped');
    }
  });

  it('a worker killed after sending and before recording: the next worker sends the byte-identical body with the same webhook-id', async () => {
    const [bookingId] = await insertBookings(1);
    // The receiver holds its answer: the worker is killed while it waits, after sending, before recording.
    receiver.answer = (delivery) => (bookingOf(delivery).id === bookingId ? { status: 204, delayMs: 20_000 } : { status: 204 });
    const doomed = await startWorker();
    await receiver.waitFor((received) => received.some((d) => bookingOf(d).id === bookingId));
    await doomed.kill();
    const sent = receiver.received.find((d) => bookingOf(d).id === bookingId)!;
    const stored = await db.query<{ body: string; attempts: number }>(
      'SELECT d.body, d.attempts FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id WHERE ev.booking_id = $1',
      [bookingId],
    );
    expect(stored.rows[0]).toEqual({ body: sent.body, attempts: 0 });
    // The booking changes meanwhile: a body built again would differ.
    await db.query("UPDATE bookings SET status = 'cancelled', updated_at = now() WHERE id = $1", [bookingId]);

    receiver.answer = () => ({ status: 204 });
    await startWorker();
    await receiver.waitFor((received) => received.filter((d) => bookingOf(d).id === bookingId).length === 2, 30_000);
    const [first, again] = receiver.received.filter((d) => bookingOf(d).id === bookingId);
    expect(again!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(Buffer.from(again!.body).equals(Buffer.from(first!.body))).toBe(true);
    expect(bookingOf(again!)).toMatchObject({ status: 'confirmed' });
    await expect.poll(async () => (await deliveries()).find((d) => d.eventId === first!.headers['webhook-id'])?.log.map((a) => a.httpStatus), { timeout: 10_000 }).toEqual([204]);
    for (const worker of workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null)) expect(await worker.stop()).toBe(0);
  });

  it('npm start delivers with its in-process worker and stops it cleanly on SIGTERM', async () => {
    if (server) {
      await db.close();
      expect(await server.stop()).toBe(0);
      capturedLogs.push(...server.output().split('\n'));
    }
    server = await startServerProcess({ ...processEnv, WEBHOOK_WORKER: 'true' });
    if (dataDir) db = await openDatabase({ dataDir });
    const [bookingId] = await insertBookings(1);
    await receiver.waitFor((received) => received.some((d) => bookingOf(d).id === bookingId));
    await expect.poll(async () => (await deliveries()).find((d) => d.state === 'succeeded' && d.log.length === 1)).toBeTruthy();
    if (dataDir) await db.close();
    expect(await server.stop()).toBe(0);
    expect(server.output()).toContain('webhook worker stopped');
    capturedLogs.push(...server.output().split('\n'));
    server = null;
  });
});
