import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type ReceivedDelivery, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { TEST_SECRET_KEY, bookingOf, insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/** Verifies with the standardwebhooks package, unchanged, reading the signature from `header`. */
const verifies = (secret: string, delivery: ReceivedDelivery, header: 'webhook-signature' | 'x-svc-signature') => {
  try {
    new Webhook(secret).verify(delivery.body, {
      'webhook-id': String(delivery.headers['webhook-id']),
      'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
      'webhook-signature': String(delivery.headers[header]),
    });
    return true;
  } catch {
    return false;
  }
};

/** A secret sealed as releases before key ids sealed them: `[nonce][tag][ciphertext]`, AES-256-GCM, no additional data. */
function sealTheOldWay(secret: string, keyBase64: string): Buffer {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(keyBase64, 'base64'), nonce);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([nonce, cipher.getAuthTag(), sealed]);
}

const keyId = (keyBase64: string) => createHash('sha256').update(Buffer.from(keyBase64, 'base64')).digest().subarray(0, 8);

describeOnEachDatabase('webhook signing secrets and the keys that seal them on %s', (target) => {
  let db: Database;
  let api: TestApi | null = null;
  let ws: SeededWorkspace;
  let receiver: WebhookReceiver;
  const env = webhookEnv();

  const restartApi = async (withEnv: Record<string, string>) => {
    await api?.close();
    api = await startTestApi(db, withEnv, { trustedCertificates: [receiver.certificate] });
  };
  const addEndpoint = (url = receiver.url) => cliOn(db, env).json<{ id: string; secret: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', url);
  const deliver = async (to: WebhookReceiver = receiver) => {
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await to.waitFor((received) => received.some((d) => bookingOf(d).id === bookingId));
    return to.received.find((d) => bookingOf(d).id === bookingId)!;
  };
  const sealedOf = async (endpointId: string) =>
    (await db.query<{ secret_ciphertext: Buffer }>('SELECT secret_ciphertext FROM webhook_endpoints WHERE id = $1', [endpointId])).rows[0]!.secret_ciphertext;
  const removeAll = async () => {
    for (const endpoint of await cliOn(db, env).json<Array<{ id: string; state: string }>>('webhook', 'list', '--workspace', ws.workspaceId)) {
      if (endpoint.state !== 'removed') await cliOn(db, env).json('webhook', 'remove', '--id', endpoint.id);
    }
  };

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Secrets', 1));
    receiver = await startReceiver();
    await restartApi(env);
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await db?.close();
  });

  it('webhooks.signature: during a rotation overlap every attempt carries both signatures in webhook-signature and x-svc-signature, each verifying with its secret; after it only the new one', async () => {
    const endpoint = await addEndpoint();
    const rotated = await cliOn(db, env).json<{ id: string; secret: string; previousSecretUntil: string }>('webhook', 'rotate-secret', '--endpoint', endpoint.id, '--overlap', '3s');
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.previousSecretUntil) - Date.now()).toBeGreaterThan(1_000);
    const listed = await cliOn(db, env).json<Array<{ id: string; previousSecretUntil: string | null }>>('webhook', 'list', '--workspace', ws.workspaceId);
    expect(listed.find((e) => e.id === endpoint.id)?.previousSecretUntil).toBe(rotated.previousSecretUntil);

    const during = await deliver();
    expect(Date.now()).toBeLessThan(Date.parse(rotated.previousSecretUntil));
    expect(during.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    expect(during.headers['x-svc-signature']).toBe(during.headers['webhook-signature']);
    for (const header of ['webhook-signature', 'x-svc-signature'] as const) {
      expect(verifies(endpoint.secret, during, header), `old secret, ${header}`).toBe(true);
      expect(verifies(rotated.secret, during, header), `new secret, ${header}`).toBe(true);
      expect(verifies(`whsec_${randomBytes(32).toString('base64')}`, during, header)).toBe(false);
    }

    await new Promise((resolve) => setTimeout(resolve, Date.parse(rotated.previousSecretUntil) - Date.now() + 50));
    const after = await deliver();
    expect(after.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    for (const header of ['webhook-signature', 'x-svc-signature'] as const) {
      expect(verifies(rotated.secret, after, header)).toBe(true);
      expect(verifies(endpoint.secret, after, header)).toBe(false);
    }
    // The secrets are stored only sealed.
    const stored = await db.query<{ row: string }>('SELECT row(e.*)::text AS row FROM webhook_endpoints e');
    for (const row of stored.rows) for (const secret of [endpoint.secret, rotated.secret]) expect(row.row).not.toContain(secret.slice(6, 20));
    await removeAll();
  });

  it('rotate-secret without an overlap retires the old secret at once, and refuses bad input clearly', async () => {
    const endpoint = await addEndpoint();
    const rotated = await cliOn(db, env).json<{ secret: string; previousSecretUntil: string | null }>('webhook', 'rotate-secret', '--endpoint', endpoint.id, '--overlap', '0');
    expect(rotated.previousSecretUntil).toBeNull();
    const delivery = await deliver();
    expect(verifies(rotated.secret, delivery, 'x-svc-signature')).toBe(true);
    expect(verifies(endpoint.secret, delivery, 'x-svc-signature')).toBe(false);
    for (const [args, message] of [
      [['--endpoint', endpoint.id, '--overlap', 'a day'], /--overlap "a day" is not a duration/],
      [['--endpoint', endpoint.id, '--overlap', '30d'], /--overlap must be at most 7d/],
      [['--endpoint', 'whe_missing'], /No webhook endpoint with id "whe_missing"/],
    ] as const) {
      const result = await cliOn(db, env).run('webhook', 'rotate-secret', ...args);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
    await removeAll();
  });

  it('secrets sealed before key ids are resealed at start, bound to their endpoint: they keep working, and no longer open on another endpoint', async () => {
    const other = await startReceiver();
    try {
      const endpoint = await addEndpoint();
      const elsewhere = await addEndpoint(other.url);
      // As the release before key ids wrote it, then an upgrade starts the service.
      await db.query('UPDATE webhook_endpoints SET secret_ciphertext = $2 WHERE id = $1', [endpoint.id, sealTheOldWay(endpoint.secret, TEST_SECRET_KEY)]);
      await restartApi(env);
      expect(api!.logs.some((line) => line.includes('"endpoints":1') && line.includes('bound to their endpoint'))).toBe(true);
      const sealed = await sealedOf(endpoint.id);
      expect(sealed[0]).toBe(0x02);
      expect(sealed.subarray(1, 9).equals(keyId(TEST_SECRET_KEY))).toBe(true);
      const first = await deliver();
      expect(verifies(endpoint.secret, first, 'x-svc-signature')).toBe(true);
      await other.waitFor((received) => received.some((d) => bookingOf(d).id === bookingOf(first).id));

      // Someone with write access copies a secret in the old, unbound format onto another endpoint
      // of a running service: it opens nowhere, and nothing is sent to that endpoint with it.
      await db.query('UPDATE webhook_endpoints SET secret_ciphertext = $2 WHERE id = $1', [elsewhere.id, sealTheOldWay(endpoint.secret, TEST_SECRET_KEY)]);
      const sentBefore = other.received.length;
      await deliver();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(other.received.length).toBe(sentBefore);
      expect(api!.logs.some((line) => line.includes(`The signing secret of webhook endpoint ${elsewhere.id} cannot be opened`))).toBe(true);
      await removeAll();
    } finally {
      await other.close();
    }
  });

  it('master key rotation: webhook reseal moves every secret, unbound ones too, to the newest key, and the old key can then be retired', async () => {
    const endpoint = await addEndpoint();
    // As the release before key ids wrote it: `webhook reseal` binds it too.
    await db.query('UPDATE webhook_endpoints SET secret_ciphertext = $2 WHERE id = $1', [endpoint.id, sealTheOldWay(endpoint.secret, TEST_SECRET_KEY)]);

    const newKey = randomBytes(32).toString('base64');
    const bothKeys = { ...env, WEBHOOK_SECRET_KEY: `${newKey},${TEST_SECRET_KEY}` };
    const second = await cliOn(db, env).json<{ id: string; secret: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url);
    expect(await cliOn(db, bothKeys).json('webhook', 'reseal')).toEqual({ resealed: 2, current: 0 });
    for (const id of [endpoint.id, second.id]) {
      const sealed = await sealedOf(id);
      expect(sealed[0]).toBe(0x02);
      expect(sealed.subarray(1, 9).equals(keyId(newKey))).toBe(true);
    }
    expect(await cliOn(db, bothKeys).json('webhook', 'reseal')).toEqual({ resealed: 0, current: 2 });

    // Only the new key from now on: both endpoints still get verifiable deliveries.
    const newKeyOnly = { ...env, WEBHOOK_SECRET_KEY: newKey };
    await restartApi(newKeyOnly);
    const bookingId = await insertBooking(db, ws.workspaceId, ws.ids.r1!);
    await receiver.waitFor((received) => received.filter((d) => bookingOf(d).id === bookingId).length === 2);
    const deliveries = receiver.received.filter((d) => bookingOf(d).id === bookingId);
    expect(deliveries.map((d) => [endpoint.secret, second.secret].filter((secret) => verifies(secret, d, 'x-svc-signature')).length)).toEqual([1, 1]);

    // The retired key alone opens nothing any more.
    const retired = await cliOn(db, env).run('webhook', 'reseal');
    expect(retired.code).not.toBe(0);
    expect(retired.stderr).toMatch(new RegExp(`no key in WEBHOOK_SECRET_KEY opens the secret of ${[endpoint.id, second.id].sort().join(', ')}`));
    await removeAll();
    await restartApi(env);
  });

  it('a sealed secret moved to another endpoint, or altered, does not open: nothing is sent with it and reseal names the endpoint', async () => {
    const other = await startReceiver();
    try {
      const source = await addEndpoint();
      const moved = await addEndpoint(other.url);
      // Someone with write access to the database copies one endpoint's sealed secret to another.
      await db.query('UPDATE webhook_endpoints SET secret_ciphertext = (SELECT secret_ciphertext FROM webhook_endpoints WHERE id = $1) WHERE id = $2', [source.id, moved.id]);
      const first = await deliver();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(other.received).toEqual([]);
      expect(verifies(source.secret, first, 'x-svc-signature')).toBe(true);
      expect(api!.logs.some((line) => line.includes(`The signing secret of webhook endpoint ${moved.id} cannot be opened`))).toBe(true);

      // An altered byte of the ciphertext.
      const sealed = await sealedOf(source.id);
      sealed.writeUInt8(sealed.readUInt8(sealed.length - 1) ^ 0x01, sealed.length - 1);
      await db.query('UPDATE webhook_endpoints SET secret_ciphertext = $2 WHERE id = $1', [source.id, sealed]);
      const result = await cliOn(db, env).run('webhook', 'reseal', '--json');
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(`opens the secret of ${[source.id, moved.id].sort().join(', ')}`);
      const before = receiver.received.length;
      await insertBooking(db, ws.workspaceId, ws.ids.r1!);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(receiver.received.length).toBe(before);
      expect(other.received).toEqual([]);
      await removeAll();
    } finally {
      await other.close();
    }
  });
});
