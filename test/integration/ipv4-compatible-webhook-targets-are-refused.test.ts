import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/** IPv6 addresses outside global unicast (2000::/3), the IPv4-compatible ::/96 first of all. */
const NOT_GLOBAL_UNICAST = [
  'https://[::127.0.0.1]/',
  'https://[::7f00:1]:8443/hooks',
  'https://[::10.0.0.1]/hooks',
  'https://[::169.254.169.254]/latest/meta-data',
  'https://[::8.8.8.8]/hooks',
  'https://[::]/hooks',
  'https://[4000::1]/hooks',
  'https://[100::1]/hooks',
];

describeOnEachDatabase('IPv4-compatible and other non-global IPv6 webhook targets on %s', (target) => {
  let db: Database;
  let ws: SeededWorkspace;
  let api: TestApi;
  const strict = webhookEnv({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_RETRY_DELAYS_MS: '0,0,0,0,0,0,0' });
  const relaxed = webhookEnv({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  const add = (env: Record<string, string>, url: string) =>
    cliOn(db, env).run('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', url, '--json');

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Compatible', 1));
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('webhooks.targets: https://[::127.0.0.1]/ and every other IPv6 target outside global unicast is refused at registration, writing nothing', async () => {
    for (const url of NOT_GLOBAL_UNICAST) {
      const result = await add(strict, url);
      expect(result.code, url).not.toBe(0);
      expect(result.stderr, url).toMatch(/non-public address.*WEBHOOK_ALLOW_PRIVATE_TARGETS=true/);
      expect(result.stdout).toBe('');
    }
    expect(await cliOn(db, strict).json<unknown[]>('webhook', 'list', '--workspace', ws.workspaceId)).toEqual([]);
    // A global unicast IPv6 address is a public target.
    expect((await add(strict, 'https://[2001:4860:4860::8888]/hooks')).code).toBe(0);
    const [endpoint] = await cliOn(db, strict).json<Array<{ id: string }>>('webhook', 'list', '--workspace', ws.workspaceId);
    // `webhook remove` names the endpoint as every other webhook command does; `--id` is the same, kept for scripts.
    for (const [args, message] of [
      [[], /Give the endpoint to remove as --endpoint <id>/],
      [['--endpoint', endpoint!.id, '--id', endpoint!.id], /Give the endpoint to remove as --endpoint <id>/],
      [['--endpoint', 'whe_missing'], /No webhook endpoint with id "whe_missing"/],
    ] as const) {
      const refused = await cliOn(db, strict).run('webhook', 'remove', ...args);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(message);
    }
    expect(await cliOn(db, strict).json('webhook', 'remove', '--endpoint', endpoint!.id)).toEqual({ id: endpoint!.id, state: 'removed' });
    expect(await cliOn(db, strict).json('webhook', 'remove', '--id', endpoint!.id)).toEqual({ id: endpoint!.id, state: 'removed' });
  });

  it('webhooks.targets: an endpoint at https://[::127.0.0.1]/ registered while private targets were allowed is refused at connect time, every attempt', async () => {
    const { id } = await cliOn(db, relaxed).json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', 'https://[::127.0.0.1]:9/hooks');
    api = await startTestApi(db, strict);
    await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await expect
      .poll(async () => (await cliOn(db, strict).json<Array<{ state: string }>>('webhook', 'deliveries', '--endpoint', id))[0]?.state, { timeout: 20_000 })
      .toBe('failed');
    const [delivery] = await cliOn(db, strict).json<Array<{ log: Array<{ error: string; httpStatus: number | null }> }>>('webhook', 'deliveries', '--endpoint', id);
    expect(delivery!.log).toHaveLength(8);
    expect(delivery!.log.every((attempt) => attempt.error === 'refused_target' && attempt.httpStatus === null)).toBe(true);
  });
});
