import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const NON_PUBLIC = [
  'https://127.0.0.1/hooks',
  'https://127.8.9.10:8443/hooks',
  'https://10.1.2.3/hooks',
  'https://172.16.0.1/hooks',
  'https://192.168.1.1/hooks',
  'https://169.254.169.254/latest/meta-data',
  'https://100.64.0.1/hooks',
  'https://0.0.0.0/hooks',
  'https://[::1]/hooks',
  'https://[fd00::1]/hooks',
  'https://[fe80::1]/hooks',
  'https://[::ffff:127.0.0.1]/hooks',
];

describeOnEachDatabase('webhook targets on %s', (target) => {
  let db: Database;
  let ws: SeededWorkspace;
  let receiver: WebhookReceiver;
  let api: TestApi;
  const strict = webhookEnv({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_RETRY_DELAYS_MS: '0,0,0,0,0,0,0' });
  const relaxed = webhookEnv({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  const add = (env: Record<string, string>, url: string) =>
    cliOn(db, env).run('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', url, '--json');
  const endpointCount = async () => (await cliOn(db, relaxed).json<unknown[]>('webhook', 'list', '--workspace', ws.workspaceId)).length;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Targets', 1));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await db?.close();
  });

  it('webhooks.targets: plain http:// targets are always refused, even with private targets allowed, and nothing is written', async () => {
    for (const env of [strict, relaxed]) {
      for (const url of ['http://example.com/hooks', 'http://127.0.0.1/hooks', 'ftp://example.com/', 'not a url', 'https://user:pw@example.com/']) {
        const result = await add(env, url);
        expect(result.code, url).not.toBe(0);
        expect(result.stderr).toMatch(/^error: --url /);
        expect(result.stdout).toBe('');
      }
    }
    expect(await endpointCount()).toBe(0);
  });

  it('refuses to register an endpoint when no key to encrypt its secret is configured, writing nothing', async () => {
    const { WEBHOOK_SECRET_KEY: _unused, ...withoutKey } = relaxed;
    const result = await add(withoutKey, 'https://hooks.example.com/in');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/^error: WEBHOOK_SECRET_KEY is not set/);
    expect(result.stdout).toBe('');
    expect(await endpointCount()).toBe(0);
  });

  it('webhooks.targets: loopback, private, link-local and other non-public addresses are refused without the development setting', async () => {
    for (const url of NON_PUBLIC) {
      const result = await add(strict, url);
      expect(result.code, url).not.toBe(0);
      expect(result.stderr).toMatch(/non-public address.*WEBHOOK_ALLOW_PRIVATE_TARGETS=true/);
    }
    expect(await endpointCount()).toBe(0);
    expect((await add(strict, 'https://hooks.example.com/in')).code).toBe(0);
    expect((await add(relaxed, 'https://127.0.0.1:9/hooks')).code).toBe(0);
    expect(await endpointCount()).toBe(2);
    const member = await cliOn(db, relaxed).run('webhook', 'add', '--workspace', ws.workspaceId, '--member', 'member@seed.example', '--url', 'https://hooks.example.com/x');
    expect(member.code).not.toBe(0);
    expect(member.stderr).toMatch(/only an owner or admin/);
  });

  it('webhooks.targets: a name that resolves to a non-public address is refused at connect time, after DNS resolution', async () => {
    for (const endpoint of await cliOn(db, relaxed).json<Array<{ id: string }>>('webhook', 'list', '--workspace', ws.workspaceId)) {
      await cliOn(db, relaxed).json('webhook', 'remove', '--id', endpoint.id);
    }
    // `localhost` is a name, so registering it passes; the connection is refused once it resolves to loopback.
    const port = new URL(receiver.url).port;
    const { id } = await cliOn(db, strict).json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', `https://localhost:${port}/hooks`);
    api = await startTestApi(db, strict, { trustedCertificates: [receiver.certificate] });
    await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await expect
      .poll(async () => (await cliOn(db, strict).json<Array<{ state: string; log: Array<{ error: string }> }>>('webhook', 'deliveries', '--endpoint', id))[0]?.state, { timeout: 20_000 })
      .toBe('failed');
    const [delivery] = await cliOn(db, strict).json<Array<{ log: Array<{ error: string; httpStatus: number | null }> }>>('webhook', 'deliveries', '--endpoint', id);
    expect(delivery!.log).toHaveLength(8);
    expect(delivery!.log.every((a) => a.error === 'refused_target' && a.httpStatus === null)).toBe(true);
    expect(receiver.received).toEqual([]);
  });

  it('webhook test to a refused target or an untrusted certificate exits 1 and says which setting mends it; an accepted one exits 0', async () => {
    const port = new URL(receiver.url).port;
    const { id } = await cliOn(db, strict).json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', `https://localhost:${port}/hooks`);
    const refused = await cliOn(db, strict).run('webhook', 'test', '--endpoint', id);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/: Failed: refused_target at \S+ in \d+ ms\n.*start the service with WEBHOOK_ALLOW_PRIVATE_TARGETS=true\.\n$/);
    const json = await cliOn(db, strict).run('webhook', 'test', '--endpoint', id, '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, error: 'refused_target', hint: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE_TARGETS=true') });
    // Allowed, the receiver's self-signed certificate is not trusted by this CLI.
    const untrusted = await cliOn(db, relaxed).run('webhook', 'test', '--endpoint', id);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stdout).toMatch(/: Failed: tls at .*\n.*NODE_EXTRA_CA_CERTS=<its PEM file>\.\n$/);
    const trusted = await cliOn(db, relaxed, receiver).run('webhook', 'test', '--endpoint', id);
    expect([trusted.code, trusted.stdout]).toEqual([0, expect.stringMatching(/Delivered \(HTTP 2\d\d\)/)]);
  });
});
