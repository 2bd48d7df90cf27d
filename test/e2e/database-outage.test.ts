import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { describeWhere } from '../support/variants.ts';

const run = promisify(execFile);
const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort() : [];
const BIN = versions.length > 0 ? `/usr/lib/postgresql/${versions.at(-1)}/bin` : null;
const isRoot = process.getuid?.() === 0;

if (!BIN) console.warn('database outage test not run: no PostgreSQL server binaries under /usr/lib/postgresql');

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A PostgreSQL cluster of this test's own, so that the machine's shared server is never stopped. */
class ThrowawayCluster {
  constructor(readonly dir: string, readonly port: number) {}

  static async create(): Promise<ThrowawayCluster> {
    const dir = await mkdtemp(join(tmpdir(), 'pg-outage-'));
    if (isRoot) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: group } = await run('id', ['-g', 'postgres']);
      await chown(dir, Number(stdout), Number(group));
    }
    const cluster = new ThrowawayCluster(dir, await freePort());
    await cluster.pg('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await cluster.start();
    return cluster;
  }

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async pg(tool: string, args: string[]): Promise<void> {
    const command = join(BIN!, tool);
    if (isRoot) await run('runuser', ['-u', 'postgres', '--', command, ...args], { cwd: this.dir });
    else await run(command, args, { cwd: this.dir });
  }

  start(): Promise<void> {
    return this.pg('pg_ctl', ['-D', join(this.dir, 'data'), '-l', join(this.dir, 'log'), '-w', '-o', `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`, 'start']);
  }

  stop(): Promise<void> {
    return this.pg('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => {});
    await rm(this.dir, { recursive: true, force: true });
  }
}

describeWhere(BIN ? null : 'no PostgreSQL server binaries under /usr/lib/postgresql', 'PostgreSQL stopped and started under load', () => {
  let cluster: ThrowawayCluster;
  let server: ServerProcess;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    cluster = await ThrowawayCluster.create();
    const db = await openDatabase({ url: cluster.url });
    await migrate(db);
    ws = await seedWorkspace(db, contractFixture('Outage', 5));
    await db.close();
    server = await startServerProcess({ DATABASE_URL: cluster.url, RATE_LIMIT_MAX: '1000000', DB_STATEMENT_TIMEOUT_MS: '2000' });
  });
  afterAll(async () => {
    await server?.stop();
    await cluster?.destroy();
  });

  it('http.unavailable: answers 503 service_unavailable while it is down (never hangs, never crashes) and 200 again within 5 s after it returns', async () => {
    const outcomes: Array<{ at: number; status: number; ms: number; body: string }> = [];
    let running = true;
    const loop = async () => {
      while (running) {
        const started = Date.now();
        const response = await fetch(`${server.url}/api/public/v1/courses`, { headers: { Authorization: `Bearer ${ws.fullKey}` } });
        outcomes.push({ at: Date.now(), status: response.status, ms: Date.now() - started, body: await response.text() });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const loops = Array.from({ length: 4 }, loop);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stoppingAt = Date.now();
    await cluster.stop();
    const stoppedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const startingAt = Date.now();
    await cluster.start();
    const startedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 5000));
    running = false;
    await Promise.all(loops);

    const before = outcomes.filter((outcome) => outcome.at < stoppingAt);
    // Once the key cache (under 1 s) has expired, every answer while it is down is 503.
    const down = outcomes.filter((outcome) => outcome.at > stoppedAt + 1000 && outcome.at < startingAt);
    const after = outcomes.filter((outcome) => outcome.at > startedAt);
    expect(before.length).toBeGreaterThan(0);
    expect(before.filter((outcome) => outcome.status !== 200).map((o) => `${o.status} ${o.body}`)).toEqual([]);
    expect(down.length).toBeGreaterThan(0);
    for (const outcome of down) {
      expect(outcome.status).toBe(503);
      expect(JSON.parse(outcome.body)).toEqual({ error: { code: 'service_unavailable', message: expect.any(String) } });
    }
    expect(Math.max(...outcomes.map((outcome) => outcome.ms))).toBeLessThan(6000);
    expect(outcomes.filter((outcome) => outcome.status !== 200 && outcome.status !== 503).map((o) => `${o.status} ${o.body}`)).toEqual([]);
    const firstOk = after.find((outcome) => outcome.status === 200);
    expect(firstOk, 'a 200 after PostgreSQL returned').toBeDefined();
    expect(firstOk!.at - startedAt).toBeLessThan(5000);
    expect(after.filter((outcome) => outcome.at > firstOk!.at).every((outcome) => outcome.status === 200)).toBe(true);
    expect(server.child.exitCode).toBeNull();
  });
});
