import type { Database } from '../db/database.ts';
import type { AttemptOutcome } from './send-attempt.ts';

/** At most 8 scheduled attempts per event and endpoint (contract part 6). */
export const MAX_ATTEMPTS = 8;
export const DELIVER_TASK = 'webhook_deliver';

export interface ClaimedDelivery {
  id: string;
  attempts: number;
  body: string | null;
  url: string;
  secretCiphertext: Buffer;
  participants: boolean;
  eventId: string;
  bookingId: string;
  eventCreatedAt: Date;
}

interface ClaimRow {
  id: string;
  attempts: number;
  body: string | null;
  url: string;
  secret_ciphertext: Buffer;
  participants: boolean;
  event_id: string;
  booking_id: string;
  event_created_at: Date;
}

const toClaimed = (row: ClaimRow): ClaimedDelivery => ({
  id: row.id,
  attempts: row.attempts,
  body: row.body,
  url: row.url,
  secretCiphertext: row.secret_ciphertext,
  participants: row.participants,
  eventId: row.event_id,
  bookingId: row.booking_id,
  eventCreatedAt: row.event_created_at,
});

/**
 * Takes the lease of a delivery: while it holds, no other attempt of this event and endpoint may
 * start, whichever worker or operator asks. A scheduled attempt needs a pending delivery that is
 * due and an endpoint that is still registered; a manual one only a registered endpoint.
 */
export async function claimDelivery(db: Database, deliveryId: string, leaseMs: number, manual: boolean): Promise<ClaimedDelivery | null> {
  const claimed = await db.query<ClaimRow>(
    `UPDATE webhook_deliveries d SET lease_until = now() + $2 * interval '1 millisecond', updated_at = now()
       FROM webhook_endpoints e, webhook_events ev
      WHERE d.id = $1 AND e.id = d.endpoint_id AND ev.id = d.event_id AND e.removed_at IS NULL
        AND (d.lease_until IS NULL OR d.lease_until < now())
        AND ($3 OR (d.state = 'pending' AND d.next_attempt_at <= now()))
      RETURNING d.id, d.attempts, d.body, e.url, e.secret_ciphertext, e.participants,
                ev.id AS event_id, ev.booking_id, ev.created_at AS event_created_at`,
    [deliveryId, leaseMs, manual],
  );
  return claimed.rows[0] ? toClaimed(claimed.rows[0]) : null;
}

/**
 * When a scheduled job finds its delivery busy (another attempt holds the lease) or not yet due,
 * it comes back when that changes; a finished delivery needs nothing more.
 */
export async function rescheduleIfPending(db: Database, deliveryId: string): Promise<void> {
  await db.query(
    `SELECT graphile_worker.add_job($2, json_build_object('deliveryId', d.id), run_at => greatest(d.lease_until, d.next_attempt_at), job_key => d.id)
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.id = $1 AND d.state = 'pending' AND e.removed_at IS NULL
        AND (d.lease_until > now() OR d.next_attempt_at > now())`,
    [deliveryId, DELIVER_TASK],
  );
}

export interface RecordedAttempt {
  number: number | null;
  state: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: Date | null;
}

/**
 * Records a scheduled attempt in one statement (one atomic step, and one round trip on the
 * embedded database): the attempt's log entry, the delivery's new state with the body it sent
 * (fixed at the first attempt, so every attempt sends the same bytes), and the job of the next
 * attempt on the configured delays, or the `failed` state after the 8th failure. A crash can
 * therefore never record a failure without its retry.
 */
export async function recordScheduledAttempt(
  db: Database,
  delivery: ClaimedDelivery,
  body: string,
  startedAt: Date,
  outcome: AttemptOutcome,
  retryDelaysMs: readonly number[],
): Promise<RecordedAttempt> {
  const number = delivery.attempts + 1;
  const delay = outcome.ok || number >= MAX_ATTEMPTS ? null : retryDelaysMs[number - 1]!;
  const state = outcome.ok ? 'succeeded' : delay === null ? 'failed' : 'pending';
  const recorded = await db.query<{ next: Date | null }>(
    `WITH delivery AS (
       UPDATE webhook_deliveries
          SET attempts = $2, lease_until = NULL, updated_at = now(), body = coalesce(body, $4),
              -- An endpoint removed during the attempt stays cancelled: the attempt is logged, no retry follows.
              state = CASE WHEN state = 'cancelled' THEN state ELSE $3::webhook_delivery_state END,
              next_attempt_at = CASE WHEN $5::int IS NULL OR state = 'cancelled' THEN NULL
                                     ELSE clock_timestamp() + $5::int * interval '1 millisecond' END
        WHERE id = $1
        RETURNING id, next_attempt_at
     ), logged AS (
       INSERT INTO webhook_attempts (delivery_id, number, manual, started_at, duration_ms, http_status, error, next_attempt_at)
       SELECT id, $2, false, $6, $7, $8, $9, next_attempt_at FROM delivery
     )
     SELECT d.next_attempt_at AS next,
            (SELECT count(*) FROM (SELECT graphile_worker.add_job($10, json_build_object('deliveryId', d.id), run_at => d.next_attempt_at, job_key => d.id)
                                    WHERE d.next_attempt_at IS NOT NULL) scheduled) AS scheduled
       FROM delivery d`,
    [delivery.id, number, state, body, delay, startedAt, outcome.durationMs, outcome.httpStatus, outcome.error, DELIVER_TASK],
  );
  return { number, state, nextAttemptAt: recorded.rows[0]?.next ?? null };
}

/**
 * A manual redelivery is logged outside the 8; its success settles the delivery (a later
 * scheduled job then finds nothing to do), its failure changes nothing about the schedule.
 */
export async function recordManualAttempt(db: Database, delivery: ClaimedDelivery, body: string, startedAt: Date, outcome: AttemptOutcome): Promise<void> {
  await db.transaction(async (client) => {
    await client.query(
      `INSERT INTO webhook_attempts (delivery_id, number, manual, started_at, duration_ms, http_status, error, next_attempt_at)
       SELECT id, NULL, true, $2, $3, $4, $5, CASE WHEN state = 'pending' AND NOT $6 THEN next_attempt_at END FROM webhook_deliveries WHERE id = $1`,
      [delivery.id, startedAt, outcome.durationMs, outcome.httpStatus, outcome.error, outcome.ok],
    );
    await client.query(
      `UPDATE webhook_deliveries
          SET lease_until = NULL, updated_at = now(), body = coalesce(body, $3),
              state = CASE WHEN $2 THEN 'succeeded'::webhook_delivery_state ELSE state END,
              next_attempt_at = CASE WHEN $2 THEN NULL ELSE next_attempt_at END
        WHERE id = $1`,
      [delivery.id, outcome.ok, body],
    );
  });
}

/** Gives the lease back without recording anything (an attempt cut short by shutdown). */
export async function releaseLease(db: Database, deliveryId: string): Promise<void> {
  await db.query('UPDATE webhook_deliveries SET lease_until = NULL WHERE id = $1', [deliveryId]);
}
