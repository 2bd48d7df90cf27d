import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { launchChromium } from './chromium.ts';
import { cliOn } from './cli.ts';
import { openTestDatabase, type DatabaseTarget } from './databases.ts';
import { postGraphQL } from './internal-graphql.ts';
import { startTestApi, type TestApi } from './public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from './seed.ts';
import { startReceiver, type WebhookReceiver } from './webhook-receiver.ts';
import { webhookEnv } from './webhooks.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * A page of another origin that shows the integrations page in an iframe, as the dashboard does:
 * a server of its own on this host (another port, so another origin).
 */
async function framingPage(): Promise<{ origin: string; frame(target: string): void; close(): Promise<void> }> {
  let target = '';
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html lang="en"><title>Dashboard</title><h1>Dashboard</h1><iframe title="Integrations" src="${target}" width="900" height="500"></iframe></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    frame: (url) => (target = url),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const CREATE_PORTAL_SESSION = /* GraphQL */ `
  mutation Portal($workspaceId: ID!, $member: String!, $readOnly: Boolean) {
    createPortalSession(workspaceId: $workspaceId, member: $member, readOnly: $readOnly) { url expiresAt }
  }
`;

/** A server, a seeded workspace, an HTTPS receiver and Chromium, for the integrations page's tests. */
export interface PageHarness {
  db: Database;
  api: TestApi;
  ws: SeededWorkspace;
  receiver: WebhookReceiver;
  context: BrowserContext;
  /** A page of the origin PORTAL_FRAME_ANCESTORS names, and one of another origin: each frames /integrations/. */
  dashboardUrl: string;
  elsewhereUrl: string;
  /** Content-Security-Policy violations and uncaught errors of every page. */
  problems: string[];
  /** Requests of any page for another origin than the service's (none is sent), the test pages' own excepted. */
  foreignRequests: string[];
  /** A link to the page, as the dashboard's backend makes one (createPortalSession on internal GraphQL). */
  link(options?: { readOnly?: boolean; member?: string }): Promise<string>;
  /** A new tab at `url`. */
  open(url: string): Promise<Page>;
  close(): Promise<void>;
}

export async function startPageHarness(target: DatabaseTarget, name: string): Promise<PageHarness> {
  const db = await openTestDatabase(target);
  const ws = await seedWorkspace(db, contractFixture(name, 3));
  const receiver = await startReceiver(() => ({ status: 200, body: 'received, thanks' }));
  const [dashboard, elsewhere] = await Promise.all([framingPage(), framingPage()]);
  const env = webhookEnv({ PORTAL_FRAME_ANCESTORS: dashboard.origin });
  const api = await startTestApi(db, env, { trustedCertificates: [receiver.certificate] });
  const token = (await cliOn(db, env, receiver).json<{ token: string }>('internal-token', 'create', '--name', 'dashboard-backend', '--integrations')).token;
  const userDataDir = await mkdtemp(join(tmpdir(), 'integrations-chromium-'));
  const context = await launchChromium(userDataDir, { width: 1280, height: 900 });
  const origin = new URL(api.url).origin;
  for (const framing of [dashboard, elsewhere]) framing.frame(`${api.url}/integrations/`);
  const problems: string[] = [];
  const foreignRequests: string[] = [];
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith('data:') || [origin, dashboard.origin, elsewhere.origin].includes(new URL(url).origin)) return route.continue();
    foreignRequests.push(url);
    return route.abort();
  });
  // Runs in every page, as text: the test's own TypeScript has no DOM types.
  await context.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (event) => console.log(`csp-violation ${event.violatedDirective} ${event.blockedURI}`));",
  });
  const harness: PageHarness = {
    db,
    api,
    ws,
    receiver,
    context,
    dashboardUrl: `${dashboard.origin}/`,
    elsewhereUrl: `${elsewhere.origin}/`,
    problems,
    foreignRequests,
    async link({ readOnly = false, member = OWNER_EMAIL } = {}) {
      const answer = await postGraphQL(api.server.internalUrl!, token, { query: CREATE_PORTAL_SESSION, variables: { workspaceId: ws.workspaceId, member, readOnly } });
      expect(answer.body.errors).toBeUndefined();
      const { url } = (answer.body.data as { createPortalSession: { url: string } }).createPortalSession;
      expect(url).toMatch(/\/integrations\/#svc_pl_/);
      return url;
    },
    async open(url) {
      const page = await context.newPage();
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.text().startsWith('csp-violation')) problems.push(message.text());
      });
      await page.goto(url, { waitUntil: 'load' });
      return page;
    },
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
      await api.close();
      await receiver.close();
      await Promise.all([dashboard.close(), elsewhere.close()]);
      await db.close();
    },
  };
  return harness;
}

/**
 * axe-core's serious and critical violations on the page as it is now. Evaluated through the
 * browser's debugging protocol, which the page's CSP does not govern: the page itself is unchanged.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof axe !== "undefined"'))) await page.evaluate(AXE);
  const { rules, found } = await page.evaluate<{ rules: number; found: Array<{ id: string; impact: string; help: string; targets: string[] }> }>(
    "axe.run(document, { resultTypes: ['violations'] }).then((result) => ({ rules: result.passes.length + result.violations.length, found: result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => String(n.target)) })) }))",
  );
  // An axe that checked nothing finds nothing: it must have applied its rules to this page.
  expect(rules).toBeGreaterThan(10);
  return found.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => `${violation.impact} ${violation.id}: ${violation.help} (${violation.targets.join(', ')})`);
}

/** Presses Tab until the focused element is the control (button, field, link) named `name` by its text or label, as a keyboard user reaches it. */
export async function tabTo(page: Page, name: string, presses = 60): Promise<void> {
  const passed: string[] = [];
  for (let i = 0; i < presses; i += 1) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate<string>("(() => { const e = document.activeElement; return e && e.matches('button, input, select, textarea, a[href]') ? (e.labels?.[0]?.textContent ?? e.getAttribute('aria-label') ?? e.textContent ?? '').trim() : ''; })()");
    if (focused === name) return;
    passed.push(focused.slice(0, 40));
  }
  throw new Error(`${name} was not reached with Tab in ${presses} presses, past: ${passed.join(' | ')}`);
}

/** The controls that change something, by their accessible names: a read-only session shows none of them. */
export const CHANGING_CONTROLS = ['New key', 'Create key', 'Save key', 'Rotate', 'Revoke', 'Revoke key', 'Add endpoint', 'Save endpoint', 'Send test event', 'Resend', 'Recover', 'Edit', 'Remove', 'Enable', 'Rotate secret', 'New feed', 'Create feed'];
