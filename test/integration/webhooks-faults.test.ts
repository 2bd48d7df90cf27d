import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { HUGE_BODY_BYTES, startFaultyReceiver, type Fault, type FaultyReceiver } from '../support/faulty-receiver.ts';
import { insertBooking, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const TIMEOUT_MS = 1000;

interface Delivery {
  state: string;
  log: Array<{ httpStatus: number | null; error: string | null; durationMs: number }>;
}

describeOnEachDatabase('receivers that misbehave on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  const receivers = new Map<Fault, { receiver: FaultyReceiver; endpointId: string }>();
  const env = webhookEnv({ WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
  const deliveries = async (fault: Fault) => cliOn(db, env).json<Delivery[]>('webhook', 'deliveries', '--endpoint', receivers.get(fault)!.endpointId);

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Faults', 1));
    for (const fault of ['drip', 'redirect', 'close-mid-answer', 'huge-body'] as const) {
      const receiver = await startFaultyReceiver(fault);
      const { id } = await cliOn(db, env).json<{ id: string }>('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url);
      receivers.set(fault, { receiver, endpointId: id });
    }
    api = await startTestApi(db, env, { trustedCertificates: [receivers.get('drip')!.receiver.certificate] });
    await insertBooking(db, ws.workspaceId, ws.ids.r1!);
  });
  afterAll(async () => {
    await api?.close();
    for (const { receiver } of receivers.values()) await receiver.close();
    await db?.close();
  });

  const firstAttempts = async (fault: Fault, count: number) => {
    await expect.poll(async () => (await deliveries(fault))[0]?.log.length ?? 0, { timeout: 30_000, interval: 200 }).toBeGreaterThanOrEqual(count);
    return (await deliveries(fault))[0]!.log.slice(0, count);
  };

  it('a receiver that answers 200 and then drips its body a byte at a time costs the attempt timeout, recorded as a timeout', async () => {
    for (const attempt of await firstAttempts('drip', 2)) {
      expect(attempt).toMatchObject({ httpStatus: null, error: 'timeout' });
      expect(attempt.durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(attempt.durationMs).toBeLessThan(TIMEOUT_MS + 500);
    }
  });

  it('a redirect is a failure (redirect) and is not followed', async () => {
    for (const attempt of await firstAttempts('redirect', 2)) {
      expect(attempt).toMatchObject({ httpStatus: 302, error: 'redirect' });
      expect(attempt.durationMs).toBeLessThan(TIMEOUT_MS);
    }
  });

  it('a receiver that closes the connection in the middle of its status line is a network failure, at once', async () => {
    for (const attempt of await firstAttempts('close-mid-answer', 2)) {
      expect(attempt).toMatchObject({ httpStatus: null, error: 'network' });
      expect(attempt.durationMs).toBeLessThan(TIMEOUT_MS);
    }
  });

  it('a 50 MB answer is not read: its status counts, the connection is closed after 64 KiB', async () => {
    const [attempt] = await firstAttempts('huge-body', 1);
    expect(attempt).toMatchObject({ httpStatus: 200, error: null });
    expect(attempt!.durationMs).toBeLessThan(TIMEOUT_MS);
    expect((await deliveries('huge-body'))[0]!.state).toBe('succeeded');
    // What the receiver could write before the sender let go is what the sockets' buffers hold, far from 50 MB.
    const written = receivers.get('huge-body')!.receiver.bytesWritten;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(HUGE_BODY_BYTES / 5);
  });
});
