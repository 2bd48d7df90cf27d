import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chromiumMissing } from '../support/chromium.ts';
import { cliOn } from '../support/cli.ts';
import { startPageHarness, tabTo, type PageHarness } from '../support/integrations-page.ts';
import { postGraphQL } from '../support/internal-graphql.ts';
import { INTERNAL_TOKEN } from '../support/public-api.ts';
import { OWNER_EMAIL } from '../support/seed.ts';
import { describeOnEachDatabase, describeWhere } from '../support/variants.ts';
import { insertBooking, verifyDelivery } from '../support/webhooks.ts';

const COURSES = '/api/public/v1/courses';

describeWhere(chromiumMissing, 'the integrations page in headless Chromium', () => {
  describeOnEachDatabase('an owner serves themselves on %s', (target) => {
    let h: PageHarness;
    let page: Page;

    beforeAll(async () => {
      h = await startPageHarness(target, 'Self-served');
      page = await h.open(await h.link());
      await page.getByRole('tab', { name: 'Keys' }).waitFor({ timeout: 30_000 });
    });
    afterAll(async () => {
      await h?.close();
    });

    it('opens the link, takes its secret out of the address at once and shows the three views as tabs', async () => {
      expect(new URL(page.url()).hash).toBe('');
      expect(page.url()).toBe(`${h.api.url}/integrations/`);
      for (const name of ['Keys', 'Webhooks', 'Calendar feeds']) await page.getByRole('tab', { name }).waitFor();
      await expect(page.getByRole('heading', { level: 1 }).innerText()).resolves.toContain('Self-served');
    });

    it('creates a key with courses:read, shown once; the key answers /courses (200), the request is in its log newest first, with its usage; revoked, the key gets 401', async () => {
      await page.getByRole('button', { name: 'New key' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Reporting');
      await page.getByRole('checkbox', { name: 'courses:read' }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const key = await page.getByLabel('New key Reporting').inputValue();
      expect(key).toMatch(/^svc_/);
      const row = page.getByRole('row').filter({ hasText: 'Reporting' });
      await row.getByRole('cell', { name: 'courses:read', exact: true }).waitFor();

      const served = await fetch(`${h.api.url}${COURSES}`, { headers: { authorization: `Bearer ${key}` } });
      expect(served.status).toBe(200);
      const requestId = served.headers.get('x-request-id')!;
      await h.api.server.keyActivity.flush();
      await row.getByRole('button', { name: 'Requests' }).click();
      const log = page.getByRole('table', { name: 'Requests with Reporting' });
      await expect(log.getByRole('row').filter({ hasText: requestId }).innerText()).resolves.toMatch(/GET \/api\/public\/v1\/courses\s+200/);
      await page.getByRole('img', { name: /^1 request in the last 30 days, 0 refused with 429/ }).waitFor();
      await page.getByLabel('Status', { exact: true }).selectOption('4xx');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('No requests match.').waitFor();
      await page.getByLabel('Status', { exact: true }).selectOption('');
      await page.getByLabel('Request id').fill(requestId);
      await page.getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => log.getByRole('row').count()).toBe(2);

      await row.getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
      await page.getByText('Reporting is revoked.').waitFor();
      await row.getByRole('cell', { name: 'revoked' }).waitFor();
      expect((await fetch(`${h.api.url}${COURSES}`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
    });

    it('input the API refuses is shown next to its field in the API\'s own words, and nothing is created', async () => {
      await page.getByRole('button', { name: 'New key' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Fenced');
      await page.getByRole('checkbox', { name: 'courses:read' }).check();
      await page.getByLabel('Allowed IPs').fill('10.0.0.0/33');
      await page.getByRole('button', { name: 'Create key' }).click();
      const field = page.getByLabel('Allowed IPs');
      await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
      const direct = await postGraphQL(h.api.server.internalUrl!, INTERNAL_TOKEN, {
        query: 'mutation($w: ID!, $m: String!) { createApiKey(workspaceId: $w, member: $m, input: { name: "Fenced", scopes: ["courses:read"], allowedIps: ["10.0.0.0/33"] }) { id } }',
        variables: { w: h.ws.workspaceId, m: OWNER_EMAIL },
      });
      const message = direct.body.errors![0]!.message;
      expect(message).toContain('10.0.0.0/33');
      await page.getByText(message, { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Cancel' }).click();
      expect(await page.getByRole('row').filter({ hasText: 'Fenced' }).count()).toBe(0);
    });

    it('adds an endpoint to an HTTPS receiver, sends a test event the receiver verifies with the secret shown once, sees the attempt and resends a delivery', async () => {
      await page.getByRole('tab', { name: 'Webhooks' }).click();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await page.getByLabel('URL', { exact: true }).fill(h.receiver.url);
      await expect(page.getByRole('checkbox', { name: 'booking.created' }).isChecked()).resolves.toBe(true);
      await page.getByRole('checkbox', { name: 'booking.updated' }).check();
      await page.getByRole('button', { name: 'Save endpoint' }).click();
      const secret = await page.getByLabel(`Signing secret of ${h.receiver.url}`).inputValue();
      expect(secret).toMatch(/^whsec_/);
      h.receiver.checkWith([secret]);
      const row = page.getByRole('row').filter({ hasText: h.receiver.url });
      await row.getByRole('cell', { name: 'booking.created, booking.updated' }).waitFor();

      await row.getByRole('button', { name: 'Send test event' }).click();
      await expect(page.getByRole('status').filter({ hasText: 'Test event booking.created' }).innerText()).resolves.toContain('the receiver answered 200');
      await expect(page.getByLabel('The receiver answered').innerText()).resolves.toBe('received, thanks');
      expect(verifyDelivery(secret, h.receiver.received.at(-1)!)).toMatchObject({ test: true });

      await insertBooking(h.db, h.ws.workspaceId, h.ws.ids.r1!);
      await h.receiver.waitFor((received) => received.some((delivery) => !(JSON.parse(delivery.body) as { test?: boolean }).test));
      const eventId = String(h.receiver.received.find((delivery) => !(JSON.parse(delivery.body) as { test?: boolean }).test)!.headers['webhook-id']);
      await row.getByRole('button', { name: 'Deliveries' }).click();
      const deliveries = page.getByRole('table', { name: `Deliveries to ${h.receiver.url}, newest first` });
      const delivery = deliveries.getByRole('row').filter({ hasText: eventId }).first();
      await expect(delivery.getByRole('table', { name: `Attempts of ${eventId}` }).getByRole('row').nth(1).innerText()).resolves.toMatch(/200\s+\d+ ms/);
      const before = h.receiver.received.length;
      await delivery.getByRole('button', { name: 'Resend' }).click();
      await expect(page.getByRole('status').filter({ hasText: `Resent ${eventId}` }).innerText()).resolves.toContain('the receiver answered 200');
      expect(h.receiver.received.length).toBe(before + 1);
      await deliveries.getByRole('table', { name: `Attempts of ${eventId}` }).getByRole('row').filter({ hasText: '(manual)' }).waitFor();

      // A resend answered 410 Gone disables the endpoint (webhooks.gone); Enable turns it back on.
      h.receiver.answer = () => ({ status: 410, body: 'gone' });
      await delivery.getByRole('button', { name: 'Resend' }).click();
      await page.getByRole('status').filter({ hasText: `Resent ${eventId}` }).filter({ hasText: '410' }).first().waitFor();
      h.receiver.answer = () => ({ status: 200, body: 'received, thanks' });
      await page.reload();
      await page.getByRole('tab', { name: 'Webhooks' }).click();
      const disabled = page.getByRole('row').filter({ hasText: h.receiver.url });
      await disabled.getByRole('cell', { name: 'disabled (gone)' }).waitFor();
      await disabled.getByRole('button', { name: 'Enable' }).click();
      await page.getByRole('status').filter({ hasText: `${h.receiver.url} is enabled again` }).first().waitFor();
      await page.getByRole('row').filter({ hasText: h.receiver.url }).getByRole('cell', { name: 'active', exact: true }).waitFor();
      expect(h.receiver.problems).toEqual([]);
    });

    it('rotates a key (the new one shown once answers, the old one gets 401) and edits it (name, scopes, allowed IPs), edits an endpoint, rotates its secret, recovers since a time and removes it', async () => {
      await page.getByRole('tab', { name: 'Keys' }).click();
      await page.getByRole('button', { name: 'New key' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Rotated');
      await page.getByRole('checkbox', { name: 'courses:read' }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const old = await page.getByLabel('New key Rotated').inputValue();
      await page.getByRole('row').filter({ hasText: 'Rotated' }).getByRole('button', { name: 'Rotate' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Rotate key' }).click();
      const rotated = await page.getByLabel('New key for Rotated').inputValue();
      expect(rotated).not.toBe(old);
      expect((await fetch(`${h.api.url}${COURSES}`, { headers: { authorization: `Bearer ${rotated}` } })).status).toBe(200);
      expect((await fetch(`${h.api.url}${COURSES}`, { headers: { authorization: `Bearer ${old}` } })).status).toBe(401);

      // Edited: renamed, a scope more, an allow list that leaves this host out, then none again.
      const call = async () => {
        const response = await fetch(`${h.api.url}/api/public/v1/bookings`, { headers: { authorization: `Bearer ${rotated}` } });
        return response.ok ? response.status : `${response.status} ${((await response.json()) as { error: { code: string } }).error.code}`;
      };
      expect(await call()).toBe('403 missing_scope');
      await page.getByRole('row').filter({ hasText: 'Rotated' }).getByRole('button', { name: 'Edit' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Renamed');
      await page.getByRole('checkbox', { name: 'bookings:read' }).check();
      await page.getByLabel('Allowed IPs').fill('192.0.2.0/24');
      await page.getByRole('button', { name: 'Save key' }).click();
      await page.getByText('Renamed is saved.').waitFor();
      const renamed = page.getByRole('row').filter({ hasText: 'Renamed' });
      await renamed.getByRole('cell', { name: '192.0.2.0/24' }).waitFor();
      await expect.poll(call).toBe('403 ip_not_allowed');
      await renamed.getByRole('button', { name: 'Edit' }).click();
      await page.getByLabel('Allowed IPs').fill('');
      await page.getByRole('button', { name: 'Save key' }).click();
      await renamed.getByRole('cell', { name: 'any', exact: true }).waitFor();
      await expect.poll(call).toBe(200);

      await page.getByRole('tab', { name: 'Webhooks' }).click();
      const row = page.getByRole('row').filter({ hasText: h.receiver.url });
      await row.getByRole('button', { name: 'Edit' }).click();
      await page.getByRole('checkbox', { name: 'booking.updated' }).uncheck();
      await page.getByRole('button', { name: 'Save endpoint' }).click();
      await page.getByText(`${h.receiver.url} is saved.`).waitFor();
      await row.getByRole('cell', { name: 'booking.created', exact: true }).waitFor();

      await row.getByRole('button', { name: 'Rotate secret' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
      const secret = await page.getByLabel(`New signing secret of ${h.receiver.url}`).inputValue();
      h.receiver.checkWith([secret]);
      await row.getByRole('button', { name: 'Send test event' }).click();
      await page.getByRole('status').filter({ hasText: 'Test event booking.created' }).waitFor();
      expect(verifyDelivery(secret, h.receiver.received.at(-1)!)).toMatchObject({ test: true });

      await row.getByRole('button', { name: 'Deliveries' }).click();
      await page.getByLabel('Since', { exact: true }).fill('tomorrow');
      await page.getByRole('button', { name: 'Recover' }).click();
      await expect.poll(() => page.getByLabel('Since', { exact: true }).getAttribute('aria-invalid')).toBe('true');
      await page.getByText('since "tomorrow" is not an ISO 8601 time').waitFor();
      await page.getByLabel('Since', { exact: true }).fill(new Date(Date.now() - 3_600_000).toISOString());
      await page.getByRole('button', { name: 'Recover' }).click();
      await page.getByText('0 failed deliveries are sent again.').waitFor();

      await row.getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Remove endpoint' }).click();
      await page.getByText(`${h.receiver.url} is removed.`).waitFor();
      await row.getByRole('cell', { name: 'removed', exact: true }).waitFor();
      expect(await row.getByRole('button').allInnerTexts()).toEqual(['Deliveries']);
      expect(h.receiver.problems).toEqual([]);
    });

    it('with the keyboard alone: moves between the views with the arrow keys, creates a calendar feed (its URL shown once) and revokes it through the confirmation', async () => {
      await page.getByRole('tab', { name: 'Webhooks' }).focus();
      await page.keyboard.press('ArrowRight');
      await expect(page.getByRole('tab', { name: 'Calendar feeds' }).getAttribute('aria-selected')).resolves.toBe('true');
      await tabTo(page, 'New feed');
      await page.keyboard.press('Enter');
      await page.keyboard.type('Team calendar');
      await tabTo(page, 'Create feed');
      await page.keyboard.press('Enter');
      const url = await page.getByLabel('Feed URL').inputValue();
      expect(url).toMatch(new RegExp(`^${h.api.url}/api/calendar/v1/svc_cal_\\w+\\.ics$`));
      expect((await fetch(url)).status).toBe(200);
      const row = page.getByRole('row').filter({ hasText: 'Team calendar' });
      await row.waitFor();

      // The confirmation is a modal dialog: Escape leaves it, the focus starts on Cancel.
      await row.getByRole('button', { name: 'Revoke' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('dialog', { name: 'Revoke Team calendar?' }).waitFor();
      await page.keyboard.press('Escape');
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      await row.getByRole('button', { name: 'Revoke' }).focus();
      await page.keyboard.press('Enter');
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Enter');
      await page.getByText('Team calendar is revoked.').waitFor();
      expect((await fetch(url)).status).toBe(404);
    });

    it('every change made on the page is in the workspace\'s audit, as the owner, with source page', async () => {
      const entries = await cliOn(h.db).json<Array<{ operation: string; source: string; memberEmail: string | null }>>('audit', 'list', '--workspace', h.ws.workspaceId);
      const fromPage = entries.filter((entry) => entry.source === 'page');
      expect(new Set(fromPage.map((entry) => entry.operation))).toEqual(
        new Set(['portal.open', 'key.create', 'key.revoke', 'key.rotate', 'key.update', 'webhook.add', 'webhook.update', 'webhook.test', 'webhook.resend', 'webhook.enable', 'webhook.rotate-secret', 'webhook.recover', 'webhook.remove', 'feed.create', 'feed.revoke']),
      );
      expect(new Set(fromPage.map((entry) => entry.memberEmail))).toEqual(new Set([OWNER_EMAIL]));
    });

    it('loads nothing from another host and meets no CSP violation or script error', () => {
      expect(h.foreignRequests).toEqual([]);
      expect(h.problems).toEqual([]);
    });
  });
});
