import type { Database, Queryable } from '../db/database.ts';
import type { ClaimedDelivery } from './claim-store.ts';
import { DELIVERIES_DUE_CHANNEL } from './due-listener.ts';
import { GONE, type AttemptOutcome } from './send-attempt.ts';

/**
 * Writes the body of a delivery before its first attempt is sent, and returns the body stored:
 * a worker that dies after sending and before recording leaves the exact bytes it sent, and the
 * next attempt sends them again. (When another attempt stored one first, that one is kept.)
 */
export async function storeBody(db: Database, deliveryId: string, body: string): Promise<string> {
  const stored = await db.query<{ body: string }>(
    'UPDATE webhook_deliveries SET body = coalesce(body, $2), body_erased_at = CASE WHEN body IS NULL THEN NULL ELSE body_erased_at END WHERE id = $1 RETURNING body',
    [deliveryId, body],
  );
  return stored.rows[0]?.body ?? body;
}

/**
 * The statement part that keeps the endpoint's health (docs/webhooks.md, "Endpoint health") in the
 * statement (or transaction) that records an attempt: a success resets the failures, a failure
 * counts, and a 410 disables the endpoint at once, so that no later claim finds it enabled.
 * Returns whether this attempt disabled it.
 */
const RECORD_ON_ENDPOINT = (delivery: string, status: string, error: string, started: string) => {
  const goneNow = `${status}::int = ${GONE} AND e.disabled_at IS NULL AND e.removed_at IS NULL`;
  return `UPDATE webhook_endpoints e
     SET consecutive_failures = CASE WHEN ${error}::text IS NULL THEN 0 ELSE e.consecutive_failures + 1 END,
         failing_since = CASE WHEN ${error}::text IS NULL THEN NULL ELSE coalesce(e.failing_since, ${started}::timestamptz) END,
         last_failure = coalesce(${error}::text, e.last_failure),
         disabled_at = CASE WHEN ${goneNow} THEN now() ELSE e.disabled_at END,
         disabled_reason = CASE WHEN ${goneNow} THEN 'gone' ELSE e.disabled_reason END
    FROM webhook_deliveries d
   WHERE d.id = ${delivery} AND e.id = d.endpoint_id
   -- Only this transaction sets disabled_at to its own start time.
   RETURNING ${status}::int = ${GONE} AND e.disabled_reason = 'gone' AND e.disabled_at = now() AS gone`;
};

/**
 * A manual redelivery is logged outside the 8; its success settles the delivery (no
 * scheduled attempt follows), its failure changes nothing about the schedule but a
 * 410, which disables the endpoint as any attempt's does. Either counts toward the endpoint's
 * health as a scheduled attempt does. True when it disabled the endpoint.
 */
export async function recordManualAttempt(db: Database, delivery: ClaimedDelivery, body: string, startedAt: Date, outcome: AttemptOutcome): Promise<boolean> {
  return db.transaction(async (tx) => {
    await tx.query(
      `INSERT INTO webhook_attempts (delivery_id, series, number, manual, started_at, duration_ms, http_status, error, next_attempt_at)
       SELECT id, series, NULL, true, $2, $3, $4, $5, CASE WHEN state = 'pending' AND NOT $6 THEN next_attempt_at END FROM webhook_deliveries WHERE id = $1`,
      [delivery.id, startedAt, outcome.durationMs, outcome.httpStatus, outcome.error, outcome.ok],
    );
    await tx.query(
      `UPDATE webhook_deliveries
          SET lease_until = NULL, updated_at = now(), body = coalesce(body, $3),
              state = CASE WHEN $2 THEN 'succeeded'::webhook_delivery_state ELSE state END,
              next_attempt_at = CASE WHEN $2 THEN NULL ELSE next_attempt_at END,
              finished_at = CASE WHEN $2 THEN now() ELSE finished_at END
        WHERE id = $1`,
      [delivery.id, outcome.ok, body],
    );
    // A scheduled attempt that fell due while this one held the lease can start now.
    await tx.query(`SELECT pg_notify($2, '') FROM webhook_deliveries WHERE id = $1 AND state = 'pending' AND next_attempt_at <= now()`, [
      delivery.id,
      DELIVERIES_DUE_CHANNEL,
    ]);
    const health = await tx.query<{ gone: boolean }>(RECORD_ON_ENDPOINT('$1', '$2', '$3', '$4'), [delivery.id, outcome.httpStatus, outcome.error, startedAt]);
    return health.rows[0]?.gone ?? false;
  });
}

/**
 * docs/webhooks.md, "What disables an endpoint": called when a delivery has failed its last
 * attempt. The endpoint is disabled when every attempt to it (scheduled or manual; test events
 * count neither way) since `windowMs` ago or earlier has failed: its failures began (its health's
 * `failing_since`, reset by a success and by `webhook enable`) at least `windowMs` ago. True when
 * it was disabled now.
 */
export async function disableIfFailing(db: Database, endpointId: string, windowMs: number): Promise<boolean> {
  const disabled = await db.query(
    `UPDATE webhook_endpoints SET disabled_at = now(), disabled_reason = 'failing'
      WHERE id = $1 AND disabled_at IS NULL AND removed_at IS NULL AND failing_since <= now() - $2 * interval '1 millisecond'`,
    [endpointId, windowMs],
  );
  return (disabled.rowCount ?? 0) > 0;
}

/**
 * Erases the stored bodies of deliveries that reached their final state more than `retentionMs`
 * ago (they may hold participant data), and the participant kept with a booking.updated event
 * once every delivery of it has; the attempt log stays. Returns how many bodies were erased.
 */
export async function eraseExpiredBodies(db: Pick<Queryable, 'query'>, retentionMs: number): Promise<number> {
  const erased = await db.query<{ bodies: string }>(
    `WITH bodies AS (
       UPDATE webhook_deliveries SET body = NULL, body_erased_at = now()
        WHERE body IS NOT NULL AND state <> 'pending' AND finished_at < now() - $1 * interval '1 millisecond'
       RETURNING 1
     ), participants AS (
       UPDATE webhook_events ev SET participant_before = NULL, participant_after = NULL, participant_erased_at = now()
        WHERE ev.with_participant AND ev.participant_erased_at IS NULL AND ev.created_at < now() - $1 * interval '1 millisecond'
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
                           WHERE d.event_id = ev.id AND (d.state = 'pending' OR d.finished_at >= now() - $1 * interval '1 millisecond'))
     )
     SELECT count(*) AS bodies FROM bodies`,
    [retentionMs],
  );
  return Number(erased.rows[0]?.bodies ?? 0);
}

/**
 * docs/architecture.md, "Webhook isolation": milliseconds until the earliest delivery becomes
 * claimable that is not claimable now, by the database's clock; null when none will. That is the
 * earliest future due time of an open endpoint's pending delivery, or the earliest end of a lease
 * (a worker that died leaves its leases to expire, and an expiring lease frees its endpoint's and
 * workspace's places). A lease that ends before its delivery is due only wakes the worker early.
 * One probe of an index per endpoint, whatever the number of pending deliveries.
 */
export async function nextDueDeliveryInMs(db: Pick<Queryable, 'query'>): Promise<number | null> {
  const next = await db.query<{ in_ms: number | null }>(
    `SELECT extract(epoch FROM min(at) - now()) * 1000 AS in_ms FROM (
       SELECT (SELECT d.next_attempt_at FROM webhook_deliveries d
                WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at > now()
                ORDER BY d.next_attempt_at LIMIT 1) AS at
         FROM webhook_endpoints e WHERE e.removed_at IS NULL AND e.disabled_at IS NULL
       UNION ALL
       SELECT (SELECT l.lease_until FROM webhook_deliveries l
                WHERE l.endpoint_id = e.id AND l.lease_until > now()
                ORDER BY l.lease_until LIMIT 1)
         FROM webhook_endpoints e
     ) due`,
  );
  const inMs = next.rows[0]?.in_ms;
  return inMs == null ? null : Number(inMs);
}

/**
 * Extends a lease still held (its end is the one the claim took) by `leaseMs` from now; the new
 * end, or null when the lease was lost (it expired and another attempt took it).
 */
export async function renewLease(db: Database, deliveryId: string, leaseUntil: Date, leaseMs: number): Promise<Date | null> {
  const renewed = await db.query<{ lease_until: Date }>(
    `UPDATE webhook_deliveries SET lease_until = now() + $3 * interval '1 millisecond' WHERE id = $1 AND lease_until = $2 AND lease_until > now() RETURNING lease_until`,
    [deliveryId, leaseUntil, leaseMs],
  );
  return renewed.rows[0]?.lease_until ?? null;
}

/**
 * Gives the lease back without recording anything (an attempt cut short by shutdown). A delivery
 * due now is announced (at once, to the workers that listen), so that another worker claims it.
 */
export async function releaseLease(db: Database, deliveryId: string): Promise<void> {
  await db.query(
    `WITH released AS (UPDATE webhook_deliveries SET lease_until = NULL WHERE id = $1 RETURNING state, next_attempt_at)
     SELECT pg_notify($2, '') FROM released WHERE state = 'pending' AND next_attempt_at <= now()`,
    [deliveryId, DELIVERIES_DUE_CHANNEL],
  );
}
