import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { errorCodes } from '../../src/errors.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { describeWhere } from '../support/variants.ts';
import { chromiumMissing, launchChromium } from '../support/chromium.ts';

const SCREENSHOT = new URL('../../test-results/docs-page.png', import.meta.url);

describeWhere(chromiumMissing, 'the API reference page in headless Chromium', () => {
  let db: Database;
  let api: TestApi;
  let userDataDir: string;
  let context: BrowserContext;
  let page: Page;
  const foreignRequests: string[] = [];
  let text = '';

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    api = await startTestApi(db);
    userDataDir = await mkdtemp(join(tmpdir(), 'docs-chromium-'));
    context = await launchChromium(userDataDir, { width: 1400, height: 1000 });
    page = context.pages()[0] ?? (await context.newPage());
    const origin = new URL(api.url).origin;
    // Every request the page makes goes through here: anything for another origin is recorded and never sent.
    await page.route('**/*', async (route) => {
      const url = route.request().url();
      if (url.startsWith('blob:') || url.startsWith('data:') || new URL(url).origin === origin) return route.continue();
      foreignRequests.push(url);
      return route.abort();
    });
    await page.goto(`${api.url}/docs`, { waitUntil: 'load' });
    await page.locator('[id="operation/listBookings"]').waitFor({ timeout: 30_000 });
    text = await page.locator('body').innerText();
    await mkdir(new URL('.', SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT.pathname, fullPage: false });
  });
  afterAll(async () => {
    await context?.close();
    if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
    await api?.close();
    await db?.close();
  });

  it('shows both public endpoints', () => {
    expect(text).toContain('/api/public/v1/courses');
    expect(text).toContain('/api/public/v1/bookings');
    expect(text).toContain('List the published course runs with their scheduled sessions');
  });

  it('shows the booking.created webhook and the calendar feed', () => {
    expect(text).toContain('A booking was created');
    expect(text).toContain('/api/calendar/v1/{token}.ics');
  });

  it('shows the three scopes', () => {
    for (const scope of ['courses:read', 'bookings:read', 'participants:read']) expect(text).toContain(scope);
  });

  it('shows every error code of the catalogue', () => {
    for (const code of errorCodes) expect(text).toContain(code);
  });

  it('loads nothing from any other origin', () => {
    expect(foreignRequests).toEqual([]);
  });

  it('saves a screenshot as a test artifact', () => {
    expect(existsSync(SCREENSHOT)).toBe(true);
  });
});
