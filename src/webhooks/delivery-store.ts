import type { Database, Queryable } from '../db/database.ts';
import type { EventType } from './event-types.ts';
import { GONE, type AttemptOutcome } from './send-attempt.ts';

/** At most 8 scheduled attempts per event and endpoint (docs/contract-rules.md, webhooks.schedule). */
export const MAX_ATTEMPTS = 8;
export const DELIVER_TASK = 'webhook_deliver';

export interface ClaimedDelivery {
  id: string;
  attempts: number;
  series: number;
  body: string | null;
  endpointId: string;
  url: string;
  secretCiphertext: Buffer;
  /** The secret before a rotation, while its overlap lasts: attempts are then signed with both. */
  previousSecretCiphertext: Buffer | null;
  participants: boolean;
  eventId: string;
  eventType: EventType;
  /** A test event (`webhook test`): its body is stored with it, and it has no booking. */
  test: boolean;
  bookingId: string | null;
  eventCreatedAt: Date;
}

interface ClaimRow {
  id: string;
  attempts: number;
  series: number;
  body: string | null;
  endpoint_id: string;
  url: string;
  secret_ciphertext: Buffer;
  previous_secret_ciphertext: Buffer | null;
  participants: boolean;
  event_id: string;
  event_type: EventType;
  test: boolean;
  booking_id: string | null;
  event_created_at: Date;
}

const toClaimed = (row: ClaimRow): ClaimedDelivery => ({
  id: row.id,
  attempts: row.attempts,
  series: row.series,
  body: row.body,
  endpointId: row.endpoint_id,
  url: row.url,
  secretCiphertext: row.secret_ciphertext,
  previousSecretCiphertext: row.previous_secret_ciphertext,
  participants: row.participants,
  eventId: row.event_id,
  eventType: row.event_type,
  test: row.test,
  bookingId: row.booking_id,
  eventCreatedAt: row.event_created_at,
});

/** A scheduled attempt (a job), a manual redelivery, or the one attempt of a test event. */
export type AttemptKind = 'scheduled' | 'manual' | 'test';

/**
 * Takes the lease of a delivery: while it holds, no other attempt of this event and endpoint may
 * start, whichever worker or operator asks. A scheduled attempt needs a pending delivery that is
 * due and an endpoint that is still registered and not disabled; a manual one only such an
 * endpoint; a test event an endpoint still registered (a test may check a disabled endpoint's
 * receiver before it is enabled again).
 */
export async function claimDelivery(db: Database, deliveryId: string, leaseMs: number, kind: AttemptKind): Promise<ClaimedDelivery | null> {
  const claimed = await db.query<ClaimRow>(
    `UPDATE webhook_deliveries d SET lease_until = now() + $2 * interval '1 millisecond', updated_at = now()
       FROM webhook_endpoints e, webhook_events ev
      WHERE d.id = $1 AND e.id = d.endpoint_id AND ev.id = d.event_id AND e.removed_at IS NULL AND (e.disabled_at IS NULL OR $3 = 'test')
        AND ev.test = ($3 = 'test')
        AND (d.lease_until IS NULL OR d.lease_until < now())
        AND ($3 <> 'scheduled' OR (d.state = 'pending' AND d.next_attempt_at <= now()))
      RETURNING d.id, d.attempts, d.series, d.body, e.id AS endpoint_id, e.url, e.secret_ciphertext, e.participants,
                CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_ciphertext END AS previous_secret_ciphertext,
                ev.id AS event_id, ev.type AS event_type, ev.test, ev.booking_id, ev.created_at AS event_created_at`,
    [deliveryId, leaseMs, kind],
  );
  return claimed.rows[0] ? toClaimed(claimed.rows[0]) : null;
}

/**
 * When a scheduled job finds its delivery busy (another attempt holds the lease) or not yet due,
 * it comes back when that changes; a finished delivery needs nothing more.
 */
export async function rescheduleIfPending(db: Database, deliveryId: string): Promise<number | null> {
  const scheduled = await db.query<{ in_ms: number }>(
    `SELECT (SELECT 1 FROM graphile_worker.add_job($2, json_build_object('deliveryId', d.id), run_at => greatest(d.lease_until, d.next_attempt_at), job_key => d.id)),
            extract(epoch FROM greatest(d.lease_until, d.next_attempt_at) - now()) * 1000 AS in_ms
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.id = $1 AND d.state = 'pending' AND e.removed_at IS NULL AND e.disabled_at IS NULL
        AND (d.lease_until > now() OR d.next_attempt_at > now())`,
    [deliveryId, DELIVER_TASK],
  );
  const row = scheduled.rows[0];
  return row ? Number(row.in_ms) : null;
}

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

export interface RecordedAttempt {
  number: number | null;
  state: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: Date | null;
  /** Milliseconds from now (the database's clock) to the next attempt, when there is one. */
  nextAttemptInMs: number | null;
  /** The receiver answered 410 and the endpoint was disabled by this attempt. */
  gone: boolean;
}

/**
 * The statement part that disables the endpoint of a delivery whose attempt was answered 410, in
 * the statement (or transaction) that records the attempt: no later claim finds it enabled.
 */
const DISABLE_IF_GONE = (deliveryParam: string, statusParam: string) =>
  `UPDATE webhook_endpoints e SET disabled_at = now(), disabled_reason = 'gone'
     FROM webhook_deliveries d
    WHERE d.id = ${deliveryParam} AND e.id = d.endpoint_id AND ${statusParam}::int = ${GONE} AND e.disabled_at IS NULL AND e.removed_at IS NULL
   RETURNING e.id`;

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
  const recorded = await db.query<{ next: Date | null; in_ms: number | null; gone: boolean }>(
    `WITH delivery AS (
       UPDATE webhook_deliveries
          SET attempts = $2, lease_until = NULL, updated_at = now(), body = coalesce(body, $4),
              -- An endpoint removed during the attempt stays cancelled: the attempt is logged, no retry follows.
              state = CASE WHEN state = 'cancelled' THEN state ELSE $3::webhook_delivery_state END,
              next_attempt_at = CASE WHEN $5::int IS NULL OR state = 'cancelled' THEN NULL
                                     ELSE clock_timestamp() + $5::int * interval '1 millisecond' END,
              finished_at = CASE WHEN $5::int IS NULL OR state = 'cancelled' THEN coalesce(finished_at, now()) END
        WHERE id = $1
        RETURNING id, series, next_attempt_at
     ), logged AS (
       INSERT INTO webhook_attempts (delivery_id, series, number, manual, started_at, duration_ms, http_status, error, next_attempt_at)
       SELECT id, series, $2, false, $6, $7, $8, $9, next_attempt_at FROM delivery
     ), gone AS (${DISABLE_IF_GONE('$1', '$8')})
     SELECT d.next_attempt_at AS next, extract(epoch FROM d.next_attempt_at - clock_timestamp()) * 1000 AS in_ms,
            EXISTS (SELECT 1 FROM gone) AS gone,
            (SELECT count(*) FROM (SELECT graphile_worker.add_job($10, json_build_object('deliveryId', d.id), run_at => d.next_attempt_at, job_key => d.id)
                                    WHERE d.next_attempt_at IS NOT NULL) scheduled) AS scheduled
       FROM delivery d`,
    [delivery.id, number, state, body, delay, startedAt, outcome.durationMs, outcome.httpStatus, outcome.error, DELIVER_TASK],
  );
  const row = recorded.rows[0];
  return { number, state, nextAttemptAt: row?.next ?? null, nextAttemptInMs: row?.in_ms == null ? null : Number(row.in_ms), gone: row?.gone ?? false };
}

/**
 * A manual redelivery is logged outside the 8; its success settles the delivery (a later
 * scheduled job then finds nothing to do), its failure changes nothing about the schedule but a
 * 410, which disables the endpoint as any attempt's does. True when it did.
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
    const gone = await tx.query(DISABLE_IF_GONE('$1', '$2'), [delivery.id, outcome.httpStatus]);
    return (gone.rowCount ?? 0) > 0;
  });
}

/**
 * docs/webhooks.md, "What disables an endpoint": called when a delivery has failed its last
 * attempt. The endpoint is disabled when no attempt to it (scheduled or manual) has succeeded for
 * `windowMs` and it has been failing for at least that long: its attempts since the last success
 * (or since its first, when none ever succeeded) began `windowMs` ago or earlier. Test events'
 * attempts count neither way. True when it was disabled now.
 */
export async function disableIfFailing(db: Database, endpointId: string, windowMs: number): Promise<boolean> {
  const disabled = await db.query(
    `WITH attempts AS (
       SELECT a.started_at, a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN webhook_events ev ON ev.id = d.event_id
        WHERE d.endpoint_id = $1 AND NOT ev.test
     ), last_success AS (
       SELECT coalesce(max(started_at), '-infinity'::timestamptz) AS at FROM attempts WHERE error IS NULL
     )
     UPDATE webhook_endpoints e SET disabled_at = now(), disabled_reason = 'failing'
      WHERE e.id = $1 AND e.disabled_at IS NULL AND e.removed_at IS NULL
        AND (SELECT at FROM last_success) < now() - $2 * interval '1 millisecond'
        AND EXISTS (SELECT 1 FROM attempts WHERE started_at > (SELECT at FROM last_success) AND started_at <= now() - $2 * interval '1 millisecond')`,
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
 * Milliseconds until the earliest delivery job that is not locked and becomes due within
 * `horizonMs`, by the database's clock; null when there is none.
 */
export async function nextDueJobInMs(db: Pick<Queryable, 'query'>, horizonMs: number): Promise<number | null> {
  const next = await db.query<{ in_ms: number | null }>(
    `SELECT extract(epoch FROM min(run_at) - now()) * 1000 AS in_ms FROM graphile_worker.jobs
      WHERE task_identifier = $1 AND locked_at IS NULL AND run_at > now() AND run_at <= now() + $2 * interval '1 millisecond'`,
    [DELIVER_TASK, horizonMs],
  );
  const inMs = next.rows[0]?.in_ms;
  return inMs == null ? null : Number(inMs);
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
