import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../../src/contract/public-v1-types.ts';
import { expectMatchesSpec } from '../support/openapi.ts';
import { contractFixture } from '../support/seed.ts';
import { ADMIN_ARGUMENTS, ROOT, START_ARGUMENTS } from '../support/service-commands.ts';

type CourseList = components['schemas']['CourseList'];
type BookingList = components['schemas']['BookingList'];

interface Started {
  child: ChildProcess;
  output: () => string;
}

function start(env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(process.execPath, START_ARGUMENTS, {
    cwd: ROOT,
    env: { ...env, PATH: process.env.PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner in time:\n${text}`)), 60_000);
    child.stdout!.on('data', () => {
      if (text.includes('curl -s -H')) {
        clearTimeout(timer);
        resolve({ child, output: () => text });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${text}`));
    });
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

/** Every process below `pid`, from /proc (Linux): npm starts a shell that starts node. */
async function descendants(pid: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => null);
    // The parent pid is the second field after the command name, which is in parentheses.
    const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields) parents.set(Number(entry), Number(fields[1]));
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [child, of] of parents) {
      if (of !== parent) continue;
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** Runs a printed curl line's request with fetch: same URL, same header. */
async function runCurlLine(line: string): Promise<{ status: number; body: unknown }> {
  const match = /curl -s -H "Authorization: Bearer (\S+)" (\S+)/.exec(line);
  if (!match) throw new Error(`not a curl line: ${line}`);
  const response = await fetch(match[2]!, { headers: { Authorization: `Bearer ${match[1]}` } });
  return { status: response.status, body: await response.json() };
}

describe('npm start on a fresh data directory', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'start-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('migrates, loads the demo workspace, prints the reference page and two working demo keys with curl lines, and prints the same keys on the next start', async () => {
    const env = { DATA_DIR: dataDir, PORT: '0', INTERNAL_PORT: '0', LOG_LEVEL: 'warn' };
    const first = await start(env);
    const banner = first.output();
    const curlLines = banner.split('\n').filter((line) => line.includes('curl -s -H'));
    expect(curlLines).toHaveLength(3);
    const courses = await runCurlLine(curlLines[0]!);
    expect(courses.status).toBe(200);
    expect((courses.body as CourseList).data.length).toBeGreaterThan(3);
    const withParticipants = await runCurlLine(curlLines[1]!);
    expect(JSON.stringify(withParticipants.body)).toContain('"participant"');
    const withoutParticipants = await runCurlLine(curlLines[2]!);
    expect(withoutParticipants.status).toBe(200);
    expect(JSON.stringify(withoutParticipants.body)).not.toContain('"participant"');
    const reference = await fetch(/Reference: (\S+)/.exec(banner)![1]!);
    expect(reference.status).toBe(200);
    expect(reference.headers.get('content-type')).toBe('text/html; charset=utf-8');
    // The integrations page's link for the demo's owner opens, once.
    const [, portalUrl, linkSecret] = /(http:\S+\/integrations\/)#(svc_pl_[0-9A-Za-z]{38})$/m.exec(banner)!;
    const openLink = () => fetch(new URL('api/session', portalUrl), { method: 'POST', headers: { 'Portal-Link': linkSecret! } });
    const opened = await openLink();
    expect(opened.status).toBe(201);
    expect(((await opened.json()) as { member: { role: string } }).member.role).toBe('owner');
    expect((await openLink()).status).toBe(401);
    expect(await stop(first.child)).toBe(0);

    const second = await start(env);
    const keys = (text: string) => [...text.matchAll(/svc_api_[0-9A-Za-z]{38}/g)].map((match) => match[0]);
    expect(new Set(keys(second.output()))).toEqual(new Set(keys(banner)));
    const again = await runCurlLine(second.output().split('\n').find((line) => line.includes('curl -s -H'))!);
    expect(again.status).toBe(200);
    // Each start prints a new link: the last one was opened.
    expect(/#(svc_pl_\w+)$/m.exec(second.output())![1]).not.toBe(linkSecret);
    expect(await stop(second.child)).toBe(0);
  });

  it('a first start copies the cluster the build prepared, and two data directories started from it share no secret: a key of one is refused by the other with no statement', async () => {
    const token = 'template-test-internal-token-0123456789';
    const dirs = [await mkdtemp(join(tmpdir(), 'start-a-')), await mkdtemp(join(tmpdir(), 'start-b-'))];
    // No periodic write of the keys' activity and no webhook worker looking for due deliveries: the
    // statements counted are the requests' alone.
    const servers = await Promise.all(
      dirs.map((dir) => start({ DATA_DIR: dir, PORT: '0', INTERNAL_PORT: '0', INTERNAL_API_TOKEN: token, LOG_LEVEL: 'warn', KEY_REQUEST_LOG_FLUSH_MS: '0', WEBHOOK_WORKER: 'false' })),
    );
    try {
      const [a, b] = servers.map((server) => server.output()) as [string, string];
      // Copied, not imported anew: the demo workspace's generated ids are the template's.
      expect(/Demo workspace (\S+)/.exec(a)![1]).toBe(/Demo workspace (\S+)/.exec(b)![1]);
      const keyOf = (banner: string) => /Key with every scope:\s+(svc_api_\w+)/.exec(banner)![1]!;
      const urlOf = (banner: string) => /on (http:\S+)/.exec(banner)![1]!;
      const statementsOfB = async () => {
        const metrics = await (await fetch(`${/Internal GraphQL: (http:\S+)\/graphql/.exec(b)![1]}/metrics`, { headers: { Authorization: `Bearer ${token}` } })).text();
        return Number(/^db_statements_total (\d+)/m.exec(metrics)?.[1]);
      };
      const call = (key: string) => fetch(`${urlOf(b)}/api/public/v1/courses`, { headers: { Authorization: `Bearer ${key}` } });
      expect((await call(keyOf(b))).status).toBe(200);
      // A's key carries A's issuer tag: B refuses it in memory, so its issuer secret is another.
      // A scrape of /metrics reads the webhook endpoints' health: its own statements are counted apart.
      const scraped = await statementsOfB();
      const before = await statementsOfB();
      const perScrape = before - scraped;
      expect((await call(keyOf(a))).status).toBe(401);
      expect((await statementsOfB()) - before).toBe(perScrape);
    } finally {
      for (const server of servers) await stop(server.child);
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    }
  });

  it('npm start runs the built JavaScript with plain node: no TypeScript loader is in the running process', async () => {
    const child = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, PORT: '0', INTERNAL_PORT: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let started: number[] = [];
    try {
      await expect.poll(() => text, { timeout: 60_000, interval: 100 }).toContain('curl -s -H');
      started = await descendants(child.pid!);
      const processes = await Promise.all(
        started.map(async (pid) => ({
          command: (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' '),
          maps: await readFile(`/proc/${pid}/maps`, 'utf8').catch(() => ''),
        })),
      );
      const service = processes.filter((entry) => /^\S*node\s/.test(entry.command) && entry.command.includes('dist/src/main.js'));
      expect(service, text).toHaveLength(1);
      expect(service[0]!.command).toMatch(/^\S*node --heap-growing-percent=50 --no-allocation-site-pretenuring --max-semi-space-size=16 dist\/src\/main\.js/);
      for (const entry of processes) {
        expect(entry.command).not.toMatch(/tsx|esbuild/);
        expect(entry.maps).not.toMatch(/esbuild|node_modules\/tsx/);
      }
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
      // The data directory is the next test's: wait until the server has let go of it.
      const alive = (pid: number) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      await expect.poll(() => started.filter(alive), { timeout: 20_000, interval: 50 }).toEqual([]);
    }
  });

  it('conformance from outside: CLI-made keys, an imported fixture and a demo calendar feed, all through the running server', async () => {
    const started = await start({ DATA_DIR: dataDir, PORT: '0', INTERNAL_PORT: '0', LOG_LEVEL: 'warn' });
    try {
      const base = /on (http:\/\/\S+)/.exec(started.output())![1]!;
      const demoWorkspace = /Demo workspace (ws_\w+)/.exec(started.output())![1]!;
      // The CLI reaches the server's embedded database through its socket while it runs.
      const cli = async (...argv: string[]) => {
        const { stdout } = await promisify(execFile)(process.execPath, [...ADMIN_ARGUMENTS, ...argv, '--json'], {
          cwd: ROOT,
          env: { PATH: process.env.PATH, DATA_DIR: dataDir },
        });
        return JSON.parse(stdout) as Record<string, unknown>;
      };
      const fixturePath = join(dataDir, 'fixture.json');
      await writeFile(fixturePath, JSON.stringify(contractFixture('Outside', 3)));
      const imported = (await cli('import', '--file', fixturePath)) as { workspaceId: string; ids: Record<string, string> };
      const issued = (await cli('key', 'create', '--workspace', imported.workspaceId, '--member', 'owner@seed.example', '--scopes', 'courses:read,bookings:read')) as { key: string };
      const get = async (path: string, key?: string) => {
        const response = await fetch(`${base}${path}`, key ? { headers: { Authorization: `Bearer ${key}` } } : {});
        const body = response.headers.get('content-type')?.startsWith('application/json') ? await response.json() : await response.text();
        const headers = Object.fromEntries(response.headers.entries());
        await expectMatchesSpec('GET', path, { status: response.status, headers, body });
        return { status: response.status, headers, body };
      };
      const courses = await get('/api/public/v1/courses', issued.key);
      expect(courses.status).toBe(200);
      expect((courses.body as CourseList).data.map((course) => course.id)).toEqual([imported.ids.r2, ...[imported.ids.r1!, imported.ids.r5!].sort()]);
      const bookings = await get('/api/public/v1/bookings', issued.key);
      expect((bookings.body as BookingList).data).toHaveLength(3);
      expect(JSON.stringify(bookings.body)).not.toContain('participant');
      expect((await get('/api/public/v1/bookings?x=1', issued.key)).status).toBe(400);
      expect((await get('/api/public/v1/courses')).status).toBe(401);

      const feed = (await cli('feed', 'create', '--workspace', demoWorkspace, '--member', 'owner@northwind.example')) as { path: string };
      const demoKey = /Key with every scope:\s+(svc_api_\w+)/.exec(started.output())![1]!;
      const listed = (await get('/api/public/v1/courses', demoKey)).body as CourseList;
      const calendar = await get(feed.path);
      expect(calendar.status).toBe(200);
      const events = new ICAL.Component(ICAL.parse(calendar.body as string)).getAllSubcomponents('vevent');
      expect(events.map((event) => event.getFirstPropertyValue('uid'))).toEqual(listed.data.flatMap((course) => course.sessions.map((session) => session.id)));
    } finally {
      expect(await stop(started.child)).toBe(0);
    }
  });

  it('refuses to start with an invalid configuration, listing every problem', async () => {
    const child = spawn(process.execPath, START_ARGUMENTS, {
      cwd: ROOT,
      env: { PATH: process.env.PATH, PORT: 'x', RATE_LIMIT_STORE: 'carrier-pigeon', DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('PORT');
    expect(stderr).toContain('RATE_LIMIT_STORE');
  });

  it('a start that fails after opening the database says why in one line, then lets the next start open it', async () => {
    // Redis refuses: the start fails once the embedded database is open and migrated.
    const child = spawn(process.execPath, START_ARGUMENTS, {
      cwd: ROOT,
      env: { PATH: process.env.PATH, PORT: '0', INTERNAL_PORT: '0', DATA_DIR: dataDir, RATE_LIMIT_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:9' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(1);
    expect(stderr.trim()).toBe('Start failed: RATE_LIMIT_STORE=redis: Redis at REDIS_URL does not accept connections (ECONNREFUSED)');
    expect(stderr).not.toMatch(/\n\s+at /);
    // The database was closed and its lock released: the next start opens the same files.
    const started = await start({ DATA_DIR: dataDir, PORT: '0', INTERNAL_PORT: '0' });
    expect(await stop(started.child)).toBe(0);
  });

  it('says in the log why the internal listener is not started without INTERNAL_API_TOKEN', async () => {
    const started = await start({ DATA_DIR: dataDir, PORT: '0', INTERNAL_PORT: '0', LOG_LEVEL: 'info' });
    expect(started.output()).toContain('INTERNAL_API_TOKEN is not set');
    expect(await stop(started.child)).toBe(0);
  });
});
