import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumMissing } from '../support/chromium.ts';
import { cliOn } from '../support/cli.ts';
import { CHANGING_CONTROLS, seriousViolations, startPageHarness, type PageHarness } from '../support/integrations-page.ts';
import { describeOnEachDatabase, describeWhere } from '../support/variants.ts';

const LINK_REFUSED = 'This link was already opened, has expired or was revoked. Ask for a new one.';

/** The controls of the page that change something, by accessible name, wherever they are. */
async function changingControls(page: Page): Promise<string[]> {
  const found: string[] = [];
  for (const name of CHANGING_CONTROLS) {
    if ((await page.getByRole('button', { name, exact: true }).count()) > 0) found.push(name);
  }
  return found;
}

describeWhere(chromiumMissing, 'the integrations page in headless Chromium', () => {
  describeOnEachDatabase('what the page lets no one do on %s', (target) => {
    let h: PageHarness;

    beforeAll(async () => {
      h = await startPageHarness(target, 'Guarded');
      // Something in each list, so that each row's controls would show.
      const owner = await h.open(await h.link());
      await owner.getByRole('button', { name: 'New key' }).click();
      await owner.getByLabel('Name', { exact: true }).fill('Existing');
      await owner.getByRole('checkbox', { name: 'courses:read' }).check();
      await owner.getByRole('button', { name: 'Create key' }).click();
      await owner.getByRole('row').filter({ hasText: 'Existing' }).waitFor();
      await owner.getByRole('tab', { name: 'Webhooks' }).click();
      await owner.getByRole('button', { name: 'Add endpoint' }).click();
      await owner.getByLabel('URL', { exact: true }).fill(h.receiver.url);
      await owner.getByRole('button', { name: 'Save endpoint' }).click();
      await owner.getByRole('row').filter({ hasText: h.receiver.url }).waitFor();
      await owner.getByRole('button', { name: 'Send test event' }).click();
      await owner.getByRole('status').filter({ hasText: 'Test event' }).waitFor();
      await owner.getByRole('tab', { name: 'Calendar feeds' }).click();
      await owner.getByRole('button', { name: 'New feed' }).click();
      await owner.getByRole('button', { name: 'Create feed' }).click();
      await owner.getByLabel('Feed URL').waitFor();
      await owner.close();
    });
    afterAll(async () => {
      await h?.close();
    });

    it('a read-only session sees every view and finds no control that changes anything; its direct calls are refused', async () => {
      const page = await h.open(await h.link({ readOnly: true }));
      await page.getByText('Read-only: you can see everything here and change nothing.').waitFor();
      await page.getByRole('row').filter({ hasText: 'Existing' }).getByRole('button', { name: 'Requests' }).click();
      await page.getByRole('heading', { name: 'Activity of Existing' }).waitFor();
      expect(await changingControls(page)).toEqual([]);
      await page.getByRole('tab', { name: 'Webhooks' }).click();
      await page.getByRole('row').filter({ hasText: h.receiver.url }).getByRole('button', { name: 'Deliveries' }).click();
      await page.getByRole('table', { name: `Deliveries to ${h.receiver.url}, newest first` }).waitFor();
      expect(await changingControls(page)).toEqual([]);
      await page.getByRole('tab', { name: 'Calendar feeds' }).click();
      await page.getByRole('table', { name: 'Calendar feeds' }).waitFor();
      expect(await changingControls(page)).toEqual([]);

      // The session the page holds, used as a script on the page could: the server refuses the change.
      const answer = await page.evaluate<{ status: number; codes: string[] }>(`(async () => {
        const session = JSON.parse(sessionStorage.getItem('integrations-session'));
        const response = await fetch('/integrations/api/graphql', {
          method: 'POST',
          headers: { Authorization: 'Bearer ' + session.session, 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: 'mutation($w: ID!, $m: String!) { createCalendarFeed(workspaceId: $w, member: $m) { id } }', variables: { w: session.workspace.id, m: session.member.email } }),
        });
        const body = await response.json();
        return { status: response.status, codes: (body.errors || []).map((error) => error.extensions && error.extensions.code) };
      })()`);
      expect(answer.codes).toEqual(['READ_ONLY_SESSION']);
      await page.close();
    });

    it('a link opens once: its second opening shows that it cannot be used, and nothing else', async () => {
      const link = await h.link();
      const first = await h.open(link);
      await first.getByRole('tab', { name: 'Keys' }).waitFor();
      await first.close();
      const second = await h.open(link);
      await second.getByText(LINK_REFUSED).waitFor();
      expect(await second.getByRole('tablist').count()).toBe(0);
      expect((await second.locator('body').innerText()).trim()).toBe(`This link cannot be used\n\n${LINK_REFUSED}`);
      expect(new URL(second.url()).hash).toBe('');
      await second.close();
    });

    it('a session revoked while the page is open (admin -- portal revoke) ends there: the page says so and shows nothing else', async () => {
      const page = await h.open(await h.link());
      await page.getByRole('tab', { name: 'Keys' }).waitFor();
      expect((await cliOn(h.db).run('portal', 'revoke', '--workspace', h.ws.workspaceId)).code).toBe(0);
      await page.getByRole('tab', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'This session has ended' }).waitFor();
      expect(await page.getByRole('tablist').count()).toBe(0);
      expect(await page.evaluate<string | null>("sessionStorage.getItem('integrations-session')")).toBeNull();
      await page.close();
    });

    it('a page of PORTAL_FRAME_ANCESTORS shows it in an iframe; a page of another origin is refused it', async () => {
      const allowed = await h.open(h.dashboardUrl);
      const shown = allowed.frameLocator('iframe');
      await shown.getByRole('heading', { name: 'This link cannot be used' }).waitFor();
      await allowed.close();
      const elsewhere = await h.open(h.elsewhereUrl);
      // Chromium shows its error page in place of a frame the policy refuses.
      await expect.poll(() => elsewhere.frames().find((candidate) => candidate !== elsewhere.mainFrame())?.url()).toBe('chrome-error://chromewebdata/');
      expect(await elsewhere.frameLocator('iframe').getByRole('heading').count()).toBe(0);
      await elsewhere.close();
    });

    it('serves the page with a strict policy: its own origin only, no inline script or style, framing as configured, never stored', async () => {
      const response = await fetch(`${h.api.url}/integrations/`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toBe(
        `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors ${new URL(h.dashboardUrl).origin}`,
      );
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('set-cookie')).toBeNull();
      const html = await response.text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)|<style|\sstyle=|\son\w+=/);
      for (const asset of html.matchAll(/(?:src|href)="(\/integrations\/assets\/[^"]+)"/g)) {
        const served = await fetch(`${h.api.url}${asset[1]}`);
        expect(served.status).toBe(200);
        expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      }
      expect((await fetch(`${h.api.url}/integrations/assets/manifest.json`)).status).toBe(404);
      expect((await fetch(`${h.api.url}/integrations/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
    });

    it('axe-core finds no serious or critical violation on any view, with its forms and panels open, nor on the refusal', async () => {
      const page = await h.open(await h.link());
      const found: string[] = [];
      await page.getByRole('tab', { name: 'Keys' }).waitFor();
      await page.getByRole('row').filter({ hasText: 'Existing' }).getByRole('button', { name: 'Requests' }).click();
      await page.getByRole('img', { name: /requests? in the last 30 days/ }).waitFor();
      await page.getByRole('button', { name: 'New key' }).click();
      found.push(...(await seriousViolations(page)).map((violation) => `Keys: ${violation}`));
      await page.getByRole('row').filter({ hasText: 'Existing' }).getByRole('button', { name: 'Revoke' }).click();
      found.push(...(await seriousViolations(page)).map((violation) => `Revoke dialog: ${violation}`));
      await page.keyboard.press('Escape');
      await page.getByRole('tab', { name: 'Webhooks' }).click();
      await page.getByRole('row').filter({ hasText: h.receiver.url }).getByRole('button', { name: 'Deliveries' }).click();
      await page.getByRole('table', { name: `Deliveries to ${h.receiver.url}, newest first` }).waitFor();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      found.push(...(await seriousViolations(page)).map((violation) => `Webhooks: ${violation}`));
      await page.getByRole('tab', { name: 'Calendar feeds' }).click();
      await page.getByRole('table', { name: 'Calendar feeds' }).waitFor();
      await page.getByRole('button', { name: 'New feed' }).click();
      found.push(...(await seriousViolations(page)).map((violation) => `Calendar feeds: ${violation}`));
      const refused = await h.open(`${h.api.url}/integrations/`);
      await refused.getByRole('heading', { name: 'This link cannot be used' }).waitFor();
      found.push(...(await seriousViolations(refused)).map((violation) => `refusal: ${violation}`));
      expect(found).toEqual([]);
      await page.close();
      await refused.close();
    });

    it('loads nothing from another host and meets no CSP violation or script error on the service\'s pages', () => {
      expect(h.foreignRequests).toEqual([]);
      expect(h.problems).toEqual([]);
    });
  });
});
