import type { Database, Queryable } from '../db/database.ts';
import type { ClaimedDelivery } from './claim-store.ts';
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
 * A manual redelivery is logged outside the 8; its success settles the delivery (a later
 * scheduled job then finds nothing to do), its failure changes nothing about the schedule but a
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
 * Milliseconds until the earliest pending delivery becomes claimable (due, and its lease, if a
 * worker that died left one, expired) within `horizonMs`, by the database's clock; null when none does.
 */
export async function nextDueDeliveryInMs(db: Pick<Queryable, 'query'>, horizonMs: number): Promise<number | null> {
  const next = await db.query<{ in_ms: number | null }>(
    `SELECT extract(epoch FROM min(greatest(next_attempt_at, lease_until)) - now()) * 1000 AS in_ms FROM webhook_deliveries
      WHERE state = 'pending' AND next_attempt_at <= now() + $1 * interval '1 millisecond'
        AND greatest(next_attempt_at, lease_until) > now() AND greatest(next_attempt_at, lease_until) <= now() + $1 * interval '1 millisecond'`,
    [horizonMs],
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

/** Gives the lease back without recording anything (an attempt cut short by shutdown). */
export async function releaseLease(db: Database, deliveryId: string): Promise<void> {
  await db.query('UPDATE webhook_deliveries SET lease_until = NULL WHERE id = $1', [deliveryId]);
}

/**
 * graphile-worker keeps the jobs of a worker that died locked for four hours. No attempt of ours
 * holds a job longer than the delivery timeout plus database work, so a job locked longer than
 * WEBHOOK_STALE_LOCK_MS belongs to a dead worker: its jobs are released for the living.
 */
export async function releaseStaleJobLocks(db: Pick<Queryable, 'query'>, staleMs: number): Promise<void> {
  await db.query(
    `SELECT graphile_worker.force_unlock_workers(ARRAY(
       SELECT DISTINCT locked_by FROM graphile_worker.jobs
        WHERE locked_by IS NOT NULL AND locked_at < now() - $1 * interval '1 millisecond'))`,
    [staleMs],
  );
}
