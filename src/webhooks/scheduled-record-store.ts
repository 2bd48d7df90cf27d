import type { Database, Queryable } from '../db/database.ts';
import { DELIVER_TASK, type ClaimedDelivery } from './claim-store.ts';
import { GONE, type AttemptOutcome } from './send-attempt.ts';

/** At most 8 scheduled attempts per event and endpoint (docs/contract-rules.md, webhooks.schedule). */
export const MAX_ATTEMPTS = 8;

/**
 * Writes the bodies of deliveries before their first attempt is sent, and returns the bodies
 * stored: a worker that dies after sending and before recording leaves the exact bytes it sent,
 * and the next attempt sends them again. (When another attempt stored one first, that one is kept.)
 */
export async function storeBodies(db: Database, bodies: ReadonlyArray<{ deliveryId: string; body: string }>): Promise<string[]> {
  const stored = await db.query<{ id: string; body: string }>(
    `UPDATE webhook_deliveries d SET body = coalesce(d.body, i.body), body_erased_at = CASE WHEN d.body IS NULL THEN NULL ELSE d.body_erased_at END
       FROM unnest($1::text[], $2::text[]) AS i (id, body)
      WHERE d.id = i.id
      RETURNING d.id, d.body`,
    [bodies.map((b) => b.deliveryId), bodies.map((b) => b.body)],
  );
  const byId = new Map(stored.rows.map((row) => [row.id, row.body]));
  return bodies.map((b) => byId.get(b.deliveryId) ?? b.body);
}

export interface ScheduledAttempt {
  delivery: ClaimedDelivery;
  body: string;
  startedAt: Date;
  outcome: AttemptOutcome;
  retryDelaysMs: readonly number[];
}

export interface RecordedAttempt {
  number: number | null;
  state: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: Date | null;
  /** Milliseconds from now (the database's clock) to the next attempt, when there is one. */
  nextAttemptInMs: number | null;
  /** The receiver answered 410 and the endpoint was disabled by this attempt (one attempt per endpoint says so). */
  gone: boolean;
}

/**
 * Records scheduled attempts, many in one statement (one atomic step): each attempt's log entry,
 * its delivery's new state with the body it sent (fixed at the first attempt, so every attempt
 * sends the same bytes), the job of the next attempt on the configured delays or the `failed`
 * state after the 8th failure, so that a crash can never record a failure without its retry;
 * and each endpoint's health (docs/webhooks.md, "Endpoint health"), as if its attempts had been
 * recorded one by one in the order they started: a success resets the failures, a failure
 * counts, and a 410 disables the endpoint at once, so that no later claim finds it enabled.
 * The endpoints' rows are locked first, in one order, so that two workers' records never deadlock.
 */
export async function recordScheduledAttempts(db: Database, attempts: readonly ScheduledAttempt[]): Promise<RecordedAttempt[]> {
  const rows = attempts.map(({ delivery, outcome, retryDelaysMs }) => {
    const number = delivery.attempts + 1;
    const delay = outcome.ok || number >= MAX_ATTEMPTS ? null : retryDelaysMs[number - 1]!;
    return { number, delay, state: outcome.ok ? ('succeeded' as const) : delay === null ? ('failed' as const) : ('pending' as const) };
  });
  const column = <T>(pick: (attempt: ScheduledAttempt, i: number) => T) => attempts.map(pick);
  // The embedded database runs one statement at a time: there nothing can interleave to deadlock.
  const ordered = <T>(work: (tx: Queryable) => Promise<T>) =>
    db.kind === 'embedded'
      ? work(db)
      : db.transaction(async (tx) => {
          // NO KEY UPDATE, as the health update's own lock: the key-share locks of the booking
          // triggers' new deliveries (their foreign key) do not wait for the recording, nor it for them.
          await tx.query('SELECT 1 FROM webhook_endpoints WHERE id = ANY ($1::text[]) ORDER BY id FOR NO KEY UPDATE', [[...new Set(column((a) => a.delivery.endpointId))]]);
          return work(tx);
        });
  const recorded = await ordered((tx) =>
    tx.query<{ id: string; next: Date | null; in_ms: number | null; gone: boolean }>(
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::int[], $6::timestamptz[], $7::int[], $8::int[], $9::text[])
           AS i (id, number, state, body, delay, started_at, duration_ms, http_status, error)
       ), delivery AS (
         UPDATE webhook_deliveries d
            SET attempts = i.number, lease_until = NULL, updated_at = now(), body = coalesce(d.body, i.body),
                -- An endpoint removed during the attempt stays cancelled: the attempt is logged, no retry follows.
                state = CASE WHEN d.state = 'cancelled' THEN d.state ELSE i.state::webhook_delivery_state END,
                next_attempt_at = CASE WHEN i.delay IS NULL OR d.state = 'cancelled' THEN NULL
                                       ELSE clock_timestamp() + i.delay * interval '1 millisecond' END,
                finished_at = CASE WHEN i.delay IS NULL OR d.state = 'cancelled' THEN coalesce(d.finished_at, now()) END
           FROM input i
          WHERE d.id = i.id
          RETURNING d.id, d.series, d.endpoint_id, d.next_attempt_at
       ), logged AS (
         INSERT INTO webhook_attempts (delivery_id, series, number, manual, started_at, duration_ms, http_status, error, next_attempt_at)
         SELECT d.id, d.series, i.number, false, i.started_at, i.duration_ms, i.http_status, i.error, d.next_attempt_at
           FROM delivery d JOIN input i ON i.id = d.id
       ), outcomes AS (
         SELECT d.endpoint_id, i.started_at, i.error, i.http_status,
                max(i.started_at) FILTER (WHERE i.error IS NULL) OVER (PARTITION BY d.endpoint_id) AS success_at
           FROM delivery d JOIN input i ON i.id = d.id
       ), health AS (
         -- The failures after the endpoint's last success in this batch (all of them when none succeeded).
         SELECT endpoint_id, max(success_at) AS success_at, bool_or(http_status = ${GONE}) AS gone,
                count(*) FILTER (WHERE error IS NOT NULL AND started_at > coalesce(success_at, '-infinity')) AS failed,
                min(started_at) FILTER (WHERE error IS NOT NULL AND started_at > coalesce(success_at, '-infinity')) AS failed_since,
                (array_agg(error ORDER BY started_at DESC) FILTER (WHERE error IS NOT NULL))[1] AS last_failure
           FROM outcomes GROUP BY endpoint_id
       ), endpoints AS (
         UPDATE webhook_endpoints e
            SET consecutive_failures = CASE WHEN h.success_at IS NULL THEN e.consecutive_failures ELSE 0 END + h.failed,
                failing_since = CASE WHEN h.success_at IS NULL THEN coalesce(e.failing_since, h.failed_since) ELSE h.failed_since END,
                last_failure = coalesce(h.last_failure, e.last_failure),
                disabled_at = CASE WHEN h.gone AND e.disabled_at IS NULL AND e.removed_at IS NULL THEN now() ELSE e.disabled_at END,
                disabled_reason = CASE WHEN h.gone AND e.disabled_at IS NULL AND e.removed_at IS NULL THEN 'gone' ELSE e.disabled_reason END
           FROM health h
          WHERE e.id = h.endpoint_id
          -- Only this transaction sets disabled_at to its own start time.
          RETURNING e.id, h.gone AND e.disabled_reason = 'gone' AND e.disabled_at = now() AS gone
       ), scheduled AS (
         SELECT count(*) AS jobs FROM graphile_worker.add_jobs(ARRAY(
           SELECT ROW($10::text, json_build_object('deliveryId', id), NULL, next_attempt_at, NULL, id, NULL, NULL)::graphile_worker.job_spec
             FROM delivery WHERE next_attempt_at IS NOT NULL))
       )
       SELECT d.id, d.next_attempt_at AS next, extract(epoch FROM d.next_attempt_at - clock_timestamp()) * 1000 AS in_ms,
              coalesce(en.gone, false) AND i.http_status = ${GONE}
                AND row_number() OVER (PARTITION BY d.endpoint_id ORDER BY i.http_status = ${GONE} DESC, d.id) = 1 AS gone
         FROM delivery d JOIN input i ON i.id = d.id LEFT JOIN endpoints en ON en.id = d.endpoint_id, scheduled`,
      [
        column((a) => a.delivery.id),
        rows.map((r) => r.number),
        rows.map((r) => r.state),
        column((a) => a.body),
        rows.map((r) => r.delay),
        column((a) => a.startedAt),
        column((a) => a.outcome.durationMs),
        column((a) => a.outcome.httpStatus),
        column((a) => a.outcome.error),
        DELIVER_TASK,
      ],
    ),
  );
  const byId = new Map(recorded.rows.map((row) => [row.id, row]));
  return attempts.map((attempt, i) => {
    const row = byId.get(attempt.delivery.id);
    const { number, state } = rows[i]!;
    return { number, state, nextAttemptAt: row?.next ?? null, nextAttemptInMs: row?.in_ms == null ? null : Number(row.in_ms), gone: row?.gone ?? false };
  });
}
