import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { OWNER_EMAIL, contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { cliOn } from '../support/cli.ts';
import { bookingOf, webhookEnv } from '../support/webhooks.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const BOOKINGS = 1000;
const WRITERS = 10;
const ROWS_PER_STATEMENT = 10;

describeOnEachDatabase('webhooks under concurrent booking inserts on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let receiver: WebhookReceiver;
  const env = webhookEnv({ WEBHOOK_CONCURRENCY: '10' });

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Load', 1));
    receiver = await startReceiver();
    await cliOn(db, env).json('webhook', 'add', '--workspace', ws.workspaceId, '--member', OWNER_EMAIL, '--url', receiver.url);
    api = await startTestApi(db, env, { trustedCertificates: [receiver.certificate] });
  });
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
    await db?.close();
  });

  it(`webhooks.guarantee: ${BOOKINGS} bookings inserted concurrently produce ${BOOKINGS} events, each delivered at least once, none lost`, async () => {
    const runs = [ws.ids.r1!, ws.ids.r2!, ws.ids.r4!];
    const inserted = (
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, writer) => {
          const ids: string[] = [];
          for (let i = 0; i < BOOKINGS / WRITERS / ROWS_PER_STATEMENT; i += 1) {
            const inserted = await db.query<{ id: string }>(
              `INSERT INTO bookings (workspace_id, course_run_id, source, status)
               SELECT $1, $2, 'widget', 'pending' FROM generate_series(1, $3) RETURNING id`,
              [ws.workspaceId, runs[(writer + i) % runs.length], ROWS_PER_STATEMENT],
            );
            ids.push(...inserted.rows.map((row) => row.id));
          }
          return ids;
        }),
      )
    ).flat();
    expect(new Set(inserted).size).toBe(BOOKINGS);

    const deliveredBookings = () => new Set(receiver.received.map((d) => bookingOf(d).id));
    await receiver.waitFor(() => deliveredBookings().size >= BOOKINGS, 150_000);
    expect([...deliveredBookings()].sort()).toEqual([...inserted].sort());
    // One event per booking: as many distinct webhook-ids as bookings, each naming one booking.
    const eventOf = new Map<string, string>();
    for (const delivery of receiver.received) eventOf.set(bookingOf(delivery).id, String(delivery.headers['webhook-id']));
    expect(new Set(eventOf.values()).size).toBe(BOOKINGS);
  }, 180_000);
});
