import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { bookingOf, insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const DISABLE_AFTER_MS = 2_500;

interface Listed {
  id: string;
  state: string;
  disabledReason: string | null;
  health: { state: string; consecutiveFailures: number; failingSince: string | null; lastFailure: string | null } | null;
}

describeOnEachDatabase('webhook endpoint health on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let receiver: WebhookReceiver;
  let endpointId: string;
  const env = webhookEnv({ WEBHOOK_DISABLE_AFTER_DAYS: String(DISABLE_AFTER_MS / 86_400_000), WEBHOOK_TIMEOUT_MS: '1000' });
  const cli = () => cliOn(db, env);
  const listed = async () => (await cli().json<Listed[]>('webhook', 'list', '--workspace', ws.workspaceId)).find((e) => e.id === endpointId)!;
  const metrics = async () => (await fetch(`${api.server.internalUrl}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
  const healthLine = (text: string) => text.split('\n').find((line) => line.startsWith(`webhook_endpoint_health{endpoint="${endpointId}"`));
  const disabledLogs = () => api.logs.filter((line) => line.includes('"msg":"webhook endpoint disabled: every attempt') && line.includes(endpointId));

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Health', 1));
    receiver = await startReceiver(() => ({ status: 503 }));
    endpointId = (await cli().json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url)).id;
    api = await startTestApi(db, env, { trustedCertificates: [receiver.certificate] });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await db?.close();
  });

  it('a new endpoint is healthy; failed attempts make it failing (count, since when, the last class) in webhook list and on /metrics; a success resets it', async () => {
    expect((await listed()).health).toEqual({ state: 'healthy', consecutiveFailures: 0, failingSince: null, lastFailure: null });
    const before = Date.now();
    await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await expect.poll(async () => (await listed()).health?.consecutiveFailures, { timeout: 15_000, interval: 100 }).toBeGreaterThanOrEqual(3);
    const failing = (await listed()).health!;
    expect(failing).toMatchObject({ state: 'failing', lastFailure: 'http_status' });
    expect(Date.parse(failing.failingSince!)).toBeGreaterThanOrEqual(before - 1000);
    expect((await cli().run('webhook', 'list', '--workspace', ws.workspaceId)).stdout).toMatch(
      new RegExp(`^${endpointId}  active .*  failing: \\d+ failed attempts since \\S+Z, the last http_status$`, 'm'),
    );
    const text = await metrics();
    expect(healthLine(text)).toBe(`webhook_endpoint_health{endpoint="${endpointId}",state="failing",reason="",last_failure="http_status"} 1`);
    expect(text).toMatch(new RegExp(`^webhook_endpoint_consecutive_failures\\{endpoint="${endpointId}"\\} [1-9]\\d*$`, 'm'));

    receiver.answer = () => ({ status: 204 });
    await expect.poll(async () => (await listed()).health?.state, { timeout: 15_000, interval: 100 }).toBe('healthy');
    expect((await listed()).health).toEqual({ state: 'healthy', consecutiveFailures: 0, failingSince: null, lastFailure: 'http_status' });
    expect((await cli().run('webhook', 'list', '--workspace', ws.workspaceId)).stdout).toMatch(new RegExp(`^${endpointId}  active .*  healthy$`, 'm'));
    expect(healthLine(await metrics())).toBe(`webhook_endpoint_health{endpoint="${endpointId}",state="healthy",reason="",last_failure="http_status"} 1`);
  });

  it('an endpoint whose every attempt failed for WEBHOOK_DISABLE_AFTER_DAYS is disabled (reason failing, logged once, on /metrics); webhook enable makes it healthy and delivers again', async () => {
    receiver.answer = () => ({ status: 503 });
    const failingFrom = Date.now();
    await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    // The endpoint is disabled when a delivery fails its last attempt after failing for the whole window.
    while (Date.now() - failingFrom < DISABLE_AFTER_MS + 500) {
      await insertBooking(db, ws.workspaceId, ws.ids.r1!);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await expect.poll(async () => (await listed()).state, { timeout: 15_000, interval: 200 }).toBe('disabled');
    const disabled = await listed();
    expect(disabled).toMatchObject({ disabledReason: 'failing', health: { state: 'disabled', lastFailure: 'http_status' } });
    expect(disabled.health!.consecutiveFailures).toBeGreaterThanOrEqual(8);
    expect((await cli().run('webhook', 'list', '--workspace', ws.workspaceId)).stdout).toMatch(new RegExp(`^${endpointId}  disabled .*\\(failing\\)`, 'm'));
    const text = await metrics();
    expect(healthLine(text)).toBe(`webhook_endpoint_health{endpoint="${endpointId}",state="disabled",reason="failing",last_failure="http_status"} 1`);
    expect(text).toMatch(/^webhook_endpoints_disabled_total 1$/m);
    // Later failures of deliveries already under way do not log it again.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(disabledLogs()).toHaveLength(1);
    expect(JSON.parse(disabledLogs()[0]!)).toMatchObject({ level: 40, endpointId, reason: 'failing' });

    receiver.answer = () => ({ status: 204 });
    await cli().json('webhook', 'enable', '--endpoint', endpointId);
    expect((await listed()).health).toMatchObject({ state: 'healthy', consecutiveFailures: 0, failingSince: null });
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await receiver.waitFor((received) => received.some((d) => d.answeredAt !== null && bookingOf(d).id === bookingId));
    expect((await listed()).health?.state).toBe('healthy');
    expect(disabledLogs()).toHaveLength(1);
  });
});
