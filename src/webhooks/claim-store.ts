import type { Database, Queryable } from '../db/database.ts';
import type { EventType } from './event-types.ts';

export const DELIVER_TASK = 'webhook_deliver';

export interface ClaimedDelivery {
  id: string;
  attempts: number;
  series: number;
  body: string | null;
  endpointId: string;
  workspaceId: string;
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
  workspace_id: string;
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
  workspaceId: row.workspace_id,
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

const RETURNED = `d.id, d.attempts, d.series, d.body, e.id AS endpoint_id, e.workspace_id, e.url, e.secret_ciphertext, e.participants,
                CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_ciphertext END AS previous_secret_ciphertext,
                ev.id AS event_id, ev.type AS event_type, ev.test, ev.booking_id, ev.created_at AS event_created_at`;

/** A manual redelivery, or the one attempt of a test event. */
export type AttemptKind = 'manual' | 'test';

/**
 * Takes the lease of a delivery for an attempt an operator asked for: while it holds, no other
 * attempt of this event and endpoint may start, whichever worker or operator asks. A manual one
 * needs an endpoint still registered and not disabled; a test event one still registered (a test
 * may check a disabled endpoint's receiver before it is enabled again). Operators' attempts are
 * not held back by the bounds of scheduled ones, but they count toward them while they run.
 */
export async function claimDelivery(db: Database, deliveryId: string, leaseMs: number, kind: AttemptKind): Promise<ClaimedDelivery | null> {
  const claimed = await db.query<ClaimRow>(
    `UPDATE webhook_deliveries d SET lease_until = now() + $2 * interval '1 millisecond', updated_at = now()
       FROM webhook_endpoints e, webhook_events ev
      WHERE d.id = $1 AND e.id = d.endpoint_id AND ev.id = d.event_id AND e.removed_at IS NULL AND (e.disabled_at IS NULL OR $3 = 'test')
        AND ev.test = ($3 = 'test') AND (d.lease_until IS NULL OR d.lease_until < now())
      RETURNING ${RETURNED}`,
    [deliveryId, leaseMs, kind],
  );
  return claimed.rows[0] ? toClaimed(claimed.rows[0]) : null;
}

/** docs/architecture.md, "Webhook isolation": how many scheduled attempts may be in flight at once, across all workers. */
export interface AttemptBounds {
  perEndpoint: number;
  perWorkspace: number;
  /** How long a lease lasts from the attempt's start (longer than the attempt may take). */
  leaseMs: number;
}

export type ScheduledClaim =
  | { delivery: ClaimedDelivery; othersWaiting: boolean }
  /** Nothing to attempt now: the job comes back in `inMs` (null: never, the delivery needs nothing more). */
  | { delivery: null; inMs: number | null };

/** Namespaces the advisory locks of claims (the first key of pg_advisory_xact_lock's pair). */
const CLAIM_LOCK_CLASS = 0x77686b31;

/**
 * A scheduled attempt (a job) takes the lease of a pending, due delivery of an enabled endpoint
 * when fewer than the bounds' attempts are in flight to its endpoint and to its workspace. An
 * attempt in flight is a lease that has not expired: released when the attempt is recorded, and
 * expiring by itself when a killed worker cannot release it. Claims of one workspace take turns
 * (a transaction-scoped advisory lock) so that two of them never both see the last free place.
 * A job that finds no place is put back, without spending an attempt, marked as waiting and behind
 * every job that did not wait (a lower priority): the next attempt of its workspace to finish
 * wakes the oldest waiter, and without one it comes back when the oldest lease in its way expires.
 */
export async function claimScheduled(db: Database, deliveryId: string, bounds: AttemptBounds): Promise<ScheduledClaim> {
  // The embedded database runs every statement alone in its one session: there the count and the
  // claim, one statement, cannot interleave with another claim, and a transaction would only hold
  // every other connection back while it lasts.
  const turn = <T>(work: (tx: Queryable) => Promise<T>): Promise<T> => (db.kind === 'embedded' ? work(db) : db.transaction(work));
  return turn(async (tx) => {
    if (db.kind !== 'embedded') {
      const locked = await tx.query(
        `SELECT 1 FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id,
                LATERAL (SELECT pg_advisory_xact_lock($2, hashtext(e.workspace_id))) l
          WHERE d.id = $1`,
        [deliveryId, CLAIM_LOCK_CLASS],
      );
      if (locked.rowCount === 0) return { delivery: null, inMs: null };
    }
    const claimed = await tx.query<Partial<ClaimRow> & { endpoint_full: boolean; workspace_full: boolean; endpoint_free_at: Date | null; workspace_free_at: Date | null; waiting: boolean }>(
      `WITH target AS (
         SELECT d.endpoint_id, e.workspace_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.id = $1
       ), load AS (
         SELECT count(l.id) FILTER (WHERE l.endpoint_id = t.endpoint_id) >= $3 AS endpoint_full, count(l.id) >= $4 AS workspace_full,
                min(l.lease_until) FILTER (WHERE l.endpoint_id = t.endpoint_id) AS endpoint_first, min(l.lease_until) AS workspace_first,
                EXISTS (SELECT 1 FROM webhook_deliveries w JOIN webhook_endpoints we ON we.id = w.endpoint_id
                         WHERE we.workspace_id = t.workspace_id AND w.waiting_since IS NOT NULL AND w.state = 'pending' AND w.id <> $1) AS waiting
           FROM target t
           LEFT JOIN webhook_endpoints we ON we.workspace_id = t.workspace_id AND we.removed_at IS NULL
           LEFT JOIN webhook_deliveries l ON l.endpoint_id = we.id AND l.lease_until IS NOT NULL AND l.lease_until > now()
          GROUP BY t.endpoint_id, t.workspace_id
       ), claimed AS (
         UPDATE webhook_deliveries d SET lease_until = now() + $2 * interval '1 millisecond', updated_at = now(), waiting_since = NULL
           FROM webhook_endpoints e, webhook_events ev, load
          WHERE d.id = $1 AND e.id = d.endpoint_id AND ev.id = d.event_id AND e.removed_at IS NULL AND e.disabled_at IS NULL AND NOT ev.test
            AND (d.lease_until IS NULL OR d.lease_until < now()) AND d.state = 'pending' AND d.next_attempt_at <= now()
            AND NOT load.endpoint_full AND NOT load.workspace_full
          RETURNING ${RETURNED}
       )
       SELECT c.*, load.endpoint_full, load.workspace_full, load.waiting, load.endpoint_first AS endpoint_free_at, load.workspace_first AS workspace_free_at
         FROM load LEFT JOIN claimed c ON true`,
      [deliveryId, bounds.leaseMs, bounds.perEndpoint, bounds.perWorkspace],
    );
    const row = claimed.rows[0];
    if (row?.id) return { delivery: toClaimed(row as ClaimRow), othersWaiting: row.waiting };
    const full = row?.endpoint_full || row?.workspace_full;
    // Without a wake-up, it comes back when the oldest lease in its way has expired, whatever became of its worker.
    const freeAt = row?.endpoint_full ? row.endpoint_free_at : row?.workspace_full ? row.workspace_free_at : null;
    return { delivery: null, inMs: await putBack(tx, deliveryId, full ? (freeAt ?? new Date(0)) : null) };
  });
}

/**
 * When a scheduled job finds its delivery busy (another attempt holds the lease), not yet due, or
 * (with `waitUntil`) no place free under the bounds, it comes back when that changes; a finished
 * delivery needs nothing more. Milliseconds until it does, or null.
 */
async function putBack(db: Queryable, deliveryId: string, waitUntil: Date | null): Promise<number | null> {
  const scheduled = await db.query<{ in_ms: number }>(
    `WITH waiting AS (
       UPDATE webhook_deliveries SET waiting_since = coalesce(waiting_since, now()) WHERE id = $1 AND $3::timestamptz IS NOT NULL
     )
     SELECT (SELECT 1 FROM graphile_worker.add_job($2, json_build_object('deliveryId', d.id), run_at => t.run_at, job_key => d.id,
                                                   priority => CASE WHEN $3::timestamptz IS NULL THEN 0 ELSE 1 END)),
            extract(epoch FROM t.run_at - now()) * 1000 AS in_ms
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id,
            LATERAL (SELECT greatest(d.lease_until, d.next_attempt_at, $3::timestamptz, now() + interval '50 milliseconds') AS run_at) t
      WHERE d.id = $1 AND d.state = 'pending' AND e.removed_at IS NULL AND e.disabled_at IS NULL
        AND (d.lease_until > now() OR d.next_attempt_at > now() OR $3::timestamptz IS NOT NULL)`,
    [deliveryId, DELIVER_TASK, waitUntil],
  );
  const row = scheduled.rows[0];
  return row ? Number(row.in_ms) : null;
}

/**
 * An attempt of this workspace has ended, and jobs of it were waiting for a place: the oldest
 * waiter (of the same endpoint first, whose place this was) runs now. True when one was woken.
 */
export async function wakeWaiting(db: Database, workspaceId: string, endpointId: string): Promise<boolean> {
  const woken = await db.query(
    `WITH next AS (
       SELECT w.id, least(w.waiting_since, w.next_attempt_at) AS waited FROM webhook_deliveries w JOIN webhook_endpoints we ON we.id = w.endpoint_id
        WHERE we.workspace_id = $1 AND we.removed_at IS NULL AND we.disabled_at IS NULL
          AND w.waiting_since IS NOT NULL AND w.state = 'pending' AND w.next_attempt_at <= now()
          AND (w.lease_until IS NULL OR w.lease_until < now())
        ORDER BY w.endpoint_id = $2 DESC, least(w.waiting_since, w.next_attempt_at), w.id
        LIMIT 1 FOR UPDATE OF w SKIP LOCKED
     ), marked AS (
       UPDATE webhook_deliveries SET waiting_since = NULL WHERE id IN (SELECT id FROM next)
     )
     -- Due since it first waited: ahead of the jobs that came after it, as if it had never been put back.
     SELECT graphile_worker.add_job($3, json_build_object('deliveryId', id), run_at => waited, job_key => id) FROM next`,
    [workspaceId, endpointId, DELIVER_TASK],
  );
  return (woken.rowCount ?? 0) > 0;
}
