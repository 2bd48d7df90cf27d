import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { ADMIN_ARGUMENTS, ROOT } from '../support/service-commands.ts';
import { chromiumMissing, launchChromium } from '../support/chromium.ts';
import { describeWhere } from '../support/variants.ts';

const SCREENSHOT = new URL('../../test-results/graphql-explorer.png', import.meta.url);
const TOKEN = 'explorer-bootstrap-token-4f9c2a7e1d';
const WRONG_TOKEN = 'explorer-wrong-token-8b3e6d0c5a';

interface SeenRequest {
  method: string;
  url: string;
  authorization: string | undefined;
}

/** Replaces the query editor's text as a user would: select everything, delete it, type the new query. */
async function typeQuery(page: Page, query: string): Promise<void> {
  const editor = page.locator('.graphiql-query-editor');
  await editor.locator('.view-lines').waitFor();
  await editor.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.insertText(query);
  // GraphiQL takes the operation's name from the editor after a pause in typing; a run sent before
  // it would carry the name of the document the editor held before.
  await page.waitForTimeout(1000);
}

async function enterToken(page: Page, token: string): Promise<void> {
  await page.getByLabel('Internal API token').fill(token);
  await page.getByRole('button', { name: 'Use token' }).click();
}

describeWhere(chromiumMissing, 'the GraphQL explorer of a running server in headless Chromium', () => {
  let dataDir: string;
  let server: ServerProcess;
  let internalUrl: string;
  let workspaceId: string;
  let userDataDir: string;
  let context: BrowserContext;
  /** Named tokens in the document modes the explorer serves: every document runs for them. */
  const named: Record<'any' | 'log', string> = { any: '', log: '' };
  const requests: SeenRequest[] = [];
  const foreignRequests: string[] = [];
  /** Content-Security-Policy violations and uncaught errors of every page. */
  const problems: string[] = [];

  async function openExplorer(): Promise<Page> {
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.text().startsWith('csp-violation')) problems.push(message.text());
    });
    await page.goto(`${internalUrl}/graphql`, { waitUntil: 'load' });
    await page.getByLabel('Internal API token').waitFor({ timeout: 30_000 });
    return page;
  }

  beforeAll(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'explorer-')), 'data');
    server = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true', INTERNAL_API_TOKEN: TOKEN });
    // The banner is one write, but it may arrive in more than one chunk.
    await vi.waitFor(() => expect(server.output()).toMatch(/Demo workspace ws_/), { timeout: 30_000 });
    internalUrl = /Internal GraphQL: (http:\/\/\S+)\/graphql/.exec(server.output())![1]!;
    workspaceId = /Demo workspace (ws_[0-9a-f]+)/.exec(server.output())![1]!;
    for (const mode of ['any', 'log'] as const) {
      // Through the running server's socket, as an operator would.
      const { stdout } = await promisify(execFile)(process.execPath, [...ADMIN_ARGUMENTS, 'internal-token', 'create', '--name', `explorer-${mode}`, '--documents', mode, '--json'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, DATA_DIR: dataDir },
      });
      named[mode] = (JSON.parse(stdout) as { token: string }).token;
    }

    userDataDir = await mkdtemp(join(tmpdir(), 'explorer-chromium-'));
    context = await launchChromium(userDataDir, { width: 1400, height: 900 });
    const origin = new URL(internalUrl).origin;
    // Every request of every page and worker: recorded, and never sent when it is for another origin.
    await context.route('**/*', async (route) => {
      const request = route.request();
      const url = request.url();
      requests.push({ method: request.method(), url, authorization: await request.headerValue('authorization').then((value) => value ?? undefined) });
      if (url.startsWith('blob:') || url.startsWith('data:') || new URL(url).origin === origin) return route.continue();
      foreignRequests.push(url);
      return route.abort();
    });
    // Runs in every page, as text: the test's own TypeScript has no DOM types.
    await context.addInitScript({
      content: "document.addEventListener('securitypolicyviolation', (event) => console.log(`csp-violation ${event.violatedDirective} ${event.blockedURI}`));",
    });
  });
  afterAll(async () => {
    await context?.close();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
    await server?.stop();
    if (dataDir) await rm(join(dataDir, '..'), { recursive: true, force: true });
  });

  it.each([
    ['the bootstrap token', () => TOKEN],
    ['a named token in any mode', () => named.any],
    ['a named token in log mode', () => named.log],
  ])('runs a query with %s entered in the page and shows the answer, with its cost', async (_which, token) => {
    const TOKEN = token();
    const query = `{ workspace(id: "${workspaceId}") { courseRunsConnection(first: 1) { edges { node { id } } } } }`;
    const direct = await fetch(`${internalUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ query }),
    });
    const expected = ((await direct.json()) as { data: { workspace: { courseRunsConnection: { edges: Array<{ node: { id: string } }> } } } }).data;
    const runId = expected.workspace.courseRunsConnection.edges[0]!.node.id;

    const page = await openExplorer();
    await enterToken(page, TOKEN);
    await typeQuery(page, query);
    await page.getByRole('button', { name: /Execute query/ }).click();
    const response = page.locator('.graphiql-response');
    await response.getByText(runId).waitFor({ timeout: 30_000 });
    // Monaco draws indentation with no-break spaces.
    expect(JSON.parse((await response.innerText()).replaceAll('\u00a0', ' '))).toEqual({
      data: expected,
      extensions: { cost: { estimate: expect.any(Number), actual: expect.any(Number), budget: 100_000, remaining: expect.any(Number), resetSeconds: expect.any(Number) } },
    });
    await mkdir(new URL('.', SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT.pathname });
    await page.close();
  });

  it.each([
    ['the bootstrap token', () => TOKEN],
    ['a named token in log mode', () => named.log],
  ])('loads the schema with %s, so the documentation explorer lists the query type', async (_which, token) => {
    const page = await openExplorer();
    await enterToken(page, token());
    // GraphiQL keeps the open pane in localStorage: an earlier page may have left it open.
    const toggle = page.getByRole('button', { name: /(Show|Hide) Documentation Explorer/i });
    if (/Show/i.test((await toggle.getAttribute('aria-label')) ?? '')) await toggle.click();
    await page.locator('.graphiql-doc-explorer').getByText('Query', { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.close();
  });

  it('shows the service\u2019s refusal in the page when the token is wrong', async () => {
    const page = await openExplorer();
    await enterToken(page, WRONG_TOKEN);
    await page.getByRole('status').getByText('The service refused this token (HTTP 401)').waitFor({ timeout: 30_000 });
    await page.locator('.graphiql-response').getByText('A valid internal API token is required.').waitFor({ timeout: 30_000 });
    await page.close();
  });

  it('loads every script, style, font and worker from the service itself and nothing from any other origin', () => {
    expect(foreignRequests).toEqual([]);
    const origin = new URL(internalUrl).origin;
    for (const { url } of requests) expect(new URL(url).origin, url).toBe(origin);
    const paths = new Set(requests.map(({ url }) => new URL(url).pathname));
    for (const worker of ['editor.worker.js', 'json.worker.js', 'graphql.worker.js']) expect(paths, worker).toContain(`/explorer/${worker}`);
  });

  it('sends a token only as the Authorization header of POST /graphql, never in a URL or in storage', async () => {
    const withToken = requests.filter(({ authorization }) => authorization !== undefined);
    expect(withToken.length).toBeGreaterThan(0);
    for (const request of withToken) {
      expect(`${request.method} ${new URL(request.url).pathname}`).toBe('POST /graphql');
      expect([`Bearer ${TOKEN}`, `Bearer ${WRONG_TOKEN}`, `Bearer ${named.any}`, `Bearer ${named.log}`]).toContain(request.authorization);
    }
    for (const { url } of requests) {
      for (const token of [TOKEN, WRONG_TOKEN, named.any, named.log]) {
        expect(url).not.toContain(token);
        expect(decodeURIComponent(url)).not.toContain(token);
      }
    }
    const page = await openExplorer();
    const stored = await page.evaluate<string>('JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookies: document.cookie })');
    await page.close();
    expect(stored).toContain('graphiql');
    for (const token of [TOKEN, WRONG_TOKEN, named.any, named.log]) expect(stored).not.toContain(token);
  });

  it('runs without a Content-Security-Policy violation or an uncaught error', () => {
    expect(problems).toEqual([]);
  });

  it('never writes a token to the server\u2019s log', () => {
    expect(server.output()).toContain('"audit":"internal-graphql"');
    // The log-mode token's introspection and queries were logged as not registered, by the token's name.
    expect(server.output()).toMatch(/"tokenName":"explorer-log"[^\n]*"msg":"internal graphql document not registered for its token"/);
    for (const token of [TOKEN, WRONG_TOKEN, named.any, named.log]) expect(server.output()).not.toContain(token);
  });
});
