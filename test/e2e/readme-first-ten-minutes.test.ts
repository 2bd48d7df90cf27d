import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumMissing, launchChromium } from '../support/chromium.ts';
import { freePort } from '../support/free-port.ts';
import { scratchCopy } from '../support/scratch-copy.ts';
import { ROOT } from '../support/service-commands.ts';
import { describeWhere } from '../support/variants.ts';

const README = await readFile(join(ROOT, 'README.md'), 'utf8');
const SECTION = README.slice(README.indexOf('## First ten minutes'), README.indexOf('## Webhooks'));

/** A shell command of the section, with the comment lines after it (what it prints, `…` for what varies). */
interface Step {
  command: string;
  comments: string[];
}

/** The section's sh blocks in order, each as its commands (continued lines joined). */
function blocks(): Step[][] {
  return [...SECTION.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => {
    const steps: Step[] = [];
    const lines = match[1]!.replace(/\\\n\s*/g, '').split('\n').map((line) => line.trim()).filter(Boolean);
    for (const line of lines) {
      if (line.startsWith('#')) steps.at(-1)?.comments.push(line.replace(/^# ?/, ''));
      else steps.push({ command: line, comments: [] });
    }
    return steps;
  });
}

/** A comment that shows what the command prints (not prose about it), as a pattern: `…` stands for anything. */
function printed(comment: string): RegExp | null {
  if (/^[a-z]/.test(comment)) return null;
  return new RegExp(comment.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*?'));
}

interface Running {
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** A command run by bash in its own process group, as a terminal runs it; stopped with the whole group. */
function background(command: string, cwd: string, env: NodeJS.ProcessEnv): Running {
  const child = spawn('bash', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => text,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGINT');
      await exited;
    },
  };
}

/** A command run to its end by bash; its output, stdout and stderr together. */
function foreground(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const running = background(command, cwd, env);
  return new Promise((resolve) => running.child.once('exit', (code) => resolve({ code, output: running.output() })));
}

/**
 * README.md's "First ten minutes", run as written on a scratch copy of the repository, with the
 * service and the receiver on ports other than the defaults: each command of the section in its
 * order, in its terminal (the service's, or the second one with the exports of the section), the
 * values the section says to take from an earlier output (`ws_…`, `svc_api_…`, `whsec_…` …) taken
 * from it. `npm ci` is the one part left out: the suite runs after it.
 */
describeWhere(chromiumMissing, "README.md's first ten minutes, as written, on ports that are not the defaults", () => {
  let scratch: string;
  let browserDir: string | undefined;
  let browser: BrowserContext | undefined;
  const servers: Running[] = [];
  const helpers: Running[] = [];

  beforeAll(async () => {
    scratch = await scratchCopy('readme-');
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    if (browserDir) await rm(browserDir, { recursive: true, force: true });
    for (const running of [...helpers, ...servers]) await running.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('every step succeeds: the service, the typed client, a key made on the integrations page and its request in the key\'s log, a calendar feed, a webhook test and a delivery verified by the example receiver; no warning on either start', async () => {
    const { DATABASE_URL: _database, REDIS_URL: _redis, DATABASE_DIRECT_URL: _direct, ...inherited } = process.env;
    const [port, internalPort, receiverPort] = [await freePort(), await freePort(), await freePort()];
    const serverEnv = { ...inherited, PORT: String(port), INTERNAL_PORT: String(internalPort), INTERNAL_API_TOKEN: 'readme-internal-token-0123456789', LOG_LEVEL: 'info' };
    const terminal: NodeJS.ProcessEnv = { ...inherited };
    const taken = new Map<string, string>();
    const fill = (text: string) => [...taken].reduce((out, [placeholder, value]) => out.split(placeholder).join(value), text);

    const startService = async (command: string) => {
      expect(command).toMatch(/npm start$/);
      const server = background(command.replace(/^npm ci && /, ''), scratch, serverEnv);
      servers.push(server);
      await expect.poll(server.output, { timeout: 120_000, interval: 200 }).toMatch(/curl -s -H|exited|Start failed/);
      return server;
    };
    const expectPrinted = (step: Step, output: string) => {
      for (const comment of step.comments) {
        const pattern = printed(comment);
        if (pattern) expect(output, `${step.command}\n${output}`).toMatch(pattern);
      }
    };
    const healthy = (output: string) => {
      expect(output).not.toMatch(/"level":[4-6]\d/);
      expect(output).not.toMatch(/Warning:|warning:|Start failed/);
    };

    const [start, exports, client, pageKey, feed, certificate, restart, webhook] = blocks();
    // 1. The service, in the first terminal; the banner's address, workspace and key in the second.
    let server = await startService(start![0]!.command);
    const banner = server.output();
    healthy(banner);
    taken.set('http://127.0.0.1:3000', /on (http:\/\/\S+)/.exec(banner)![1]!);
    expect(taken.get('http://127.0.0.1:3000')).toBe(`http://127.0.0.1:${port}`);
    taken.set('ws_…', /Demo workspace (ws_\w+)/.exec(banner)![1]!);
    taken.set('svc_api_…', /Key with every scope:\s+(svc_api_\w+)/.exec(banner)![1]!);
    const run = async (step: Step) => {
      const command = fill(step.command);
      if (command.startsWith('export ')) {
        for (const assignment of command.slice('export '.length).split(/\s+/)) {
          const [name, value] = assignment.split('=') as [string, string];
          terminal[name] = name === 'RECEIVER_PORT' ? String(receiverPort) : value;
        }
        return '';
      }
      if (command.endsWith('&')) {
        const helper = background(command.slice(0, -1), scratch, terminal);
        helpers.push(helper);
        const pattern = step.comments.map(printed).find((found) => found !== null);
        await expect.poll(helper.output, { timeout: 60_000, interval: 200 }).toMatch(pattern ?? /./);
        return helper.output();
      }
      const result = await foreground(command, scratch, terminal);
      expect(result.code, `${command}\n${result.output}`).toBe(0);
      expectPrinted(step, result.output);
      return result.output;
    };
    for (const step of exports!) await run(step);
    expect(terminal.API_URL).toBe(`http://127.0.0.1:${port}`);

    // 2. The reference page.
    const reference = await fetch(`${terminal.API_URL}/docs`);
    expect(reference.status).toBe(200);
    expect(reference.headers.get('content-type')).toContain('text/html');

    // 3. The typed client, reading API_URL and API_KEY.
    for (const step of client!) await run(step);

    // 4. The banner's link opened in a browser: a key made on the page, called, then seen in its log.
    const link = /Integrations page as the demo workspace's owner.*\n\s+(http\S+)/.exec(banner)![1]!;
    browserDir = await mkdtemp(join(tmpdir(), 'readme-chromium-'));
    browser = await launchChromium(browserDir, { width: 1280, height: 900 });
    const page = await browser.newPage();
    await page.goto(link);
    await page.getByRole('button', { name: 'New key' }).click();
    await page.getByLabel('Name', { exact: true }).fill('My first key');
    await page.getByRole('checkbox', { name: 'courses:read' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const myKey = await page.getByLabel('New key My first key').inputValue();
    const [keyExport, keyCall] = pageKey!;
    await run({ ...keyExport!, command: keyExport!.command.replace('svc_api_…', myKey) });
    expect(terminal.MY_KEY).toBe(myKey);
    await run(keyCall!);
    await page.getByRole('row').filter({ hasText: 'My first key' }).getByRole('button', { name: 'Requests' }).click();
    const log = page.getByRole('table', { name: 'Requests with My first key' });
    // The service writes keys' activity about once a second.
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return log.getByRole('row').filter({ hasText: 'GET /api/public/v1/courses' }).count();
      }, { timeout: 30_000, interval: 500 })
      .toBe(1);

    // 5. A feed, then its calendar.
    const created = JSON.parse(await run(feed![0]!)) as { token: string };
    taken.set('svc_cal_…', created.token);
    await run(feed![1]!);

    // 6. A certificate, a restart with the two settings, then the receiver, a test event and a booking.
    for (const step of certificate!) await run(step);
    await server.stop();
    server = await startService(restart![0]!.command);
    healthy(server.output());
    const [settings, add, receiver, test, ...rest] = webhook!;
    await run(settings!);
    expect(terminal.RECEIVER_PORT).toBe(String(receiverPort));
    const endpoint = JSON.parse(await run(add!)) as { id: string; secret: string };
    taken.set('whe_…', endpoint.id);
    taken.set('whsec_…', endpoint.secret);
    const listening = await run(receiver!);
    expect(listening).toContain(`https://localhost:${receiverPort}/`);
    const tested = await run(test!);
    expect(tested).toMatch(/Delivered \(HTTP 204\)/);
    for (const step of rest) await run(step);
    // The booking's event, delivered by the running service and verified by the receiver.
    await expect.poll(helpers.at(-1)!.output, { timeout: 60_000, interval: 200 }).toMatch(/\{"received":"booking\.created","id":"evt_\w+","booking":"bkg_\w+"/);
  }, 600_000);
});
