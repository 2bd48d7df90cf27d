import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { components } from '../../src/contract/public-v1-types.ts';
import type { Database } from '../../src/db/database.ts';
import type { ReceivedDelivery } from './webhook-receiver.ts';

/** The key that encrypts endpoint secrets in these tests (base64 of 32 bytes). */
export const TEST_SECRET_KEY = randomBytes(32).toString('base64');

/** Settings for fast webhook tests: short polls and delays, private (local) targets allowed. */
export function webhookEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    WEBHOOK_SECRET_KEY: TEST_SECRET_KEY,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_POLL_INTERVAL_MS: '100',
    WEBHOOK_RETRY_DELAYS_MS: '100,100,100,100,100,100,100',
    WEBHOOK_TIMEOUT_MS: '2000',
    ...overrides,
  };
}

let counter = 0;

/**
 * Inserts a booking (with its participant, when given) with plain SQL in one statement, as the
 * platform records a booking in one transaction; returns its id.
 */
export async function insertBooking(db: Pick<Database, 'query'>, workspaceId: string, courseRunId: string, participant?: { name: string; email: string }): Promise<string> {
  counter += 1;
  const inserted = await db.query<{ id: string }>(
    `WITH booking AS (
       INSERT INTO bookings (workspace_id, course_run_id, source, status) VALUES ($1, $2, 'api', 'confirmed') RETURNING id
     ), participant AS (
       INSERT INTO participants (booking_id, name, email) SELECT id, $3, $4 FROM booking WHERE $3::text IS NOT NULL
     )
     SELECT id FROM booking`,
    [workspaceId, courseRunId, participant?.name ?? null, participant ? `${counter}-${participant.email}` : null],
  );
  return inserted.rows[0]!.id;
}

/** The Standard Webhooks headers a receiver verifies, with `x-svc-signature` as the signature. */
export function standardHeaders(delivery: ReceivedDelivery): Record<string, string> {
  return {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['x-svc-signature']),
  };
}

/** Verifies a delivery with the standardwebhooks package, unchanged; throws when it does not verify. */
export function verifyDelivery(secret: string, delivery: ReceivedDelivery, body = delivery.body): unknown {
  return new Webhook(secret).verify(body, standardHeaders(delivery));
}

export const bookingOf = (delivery: ReceivedDelivery) => (JSON.parse(delivery.body) as components['schemas']['BookingCreatedEvent']).data.booking;
