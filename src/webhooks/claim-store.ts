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
  /** The lease this claim took: whoever holds a lease with this end holds this attempt. */
  leaseUntil: Date;
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
  lease_until: Date;
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
  leaseUntil: row.lease_until,
});

const RETURNED = `d.id, d.attempts, d.series, d.body, e.id AS endpoint_id, e.workspace_id, e.url, e.secret_ciphertext, e.participants,
                CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_ciphertext END AS previous_secret_ciphertext,
                ev.id AS event_id, ev.type AS event_type, ev.test, ev.booking_id, ev.created_at AS event_created_at, d.lease_until`;

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

/** Namespaces the advisory lock that makes the claims of all workers take turns. */
const CLAIM_LOCK = [0x77686b31, 0] as const;

/**
 * docs/architecture.md, "Webhook isolation": takes the leases of up to `limit` pending, due
 * deliveries of enabled endpoints, in a fair order, in one statement. An attempt in flight is a
 * lease that has not expired (released when the attempt is recorded, expiring by itself when a
 * killed worker cannot release it); no endpoint gets more than `perEndpoint` of them, no workspace
 * more than `perWorkspace`. Each workspace's first free place is handed out before any
 * workspace's second, and within a workspace each endpoint's before any endpoint's second, oldest
 * due first: an endpoint with a backlog cannot starve another. The claims of all workers take
 * turns (a transaction-scoped advisory lock, held for this one statement) so that two of them
 * never both see the last free place; a claim holds one connection and never waits on a delivery.
 */
export async function claimDue(db: Database, bounds: AttemptBounds, limit: number): Promise<ClaimedDelivery[]> {
  const claim = async (tx: Queryable) =>
    (
      await tx.query<ClaimRow>(
        `WITH endpoints AS (
           -- Each endpoint's attempts in flight (a removed one's may still run for a lease's time),
           -- counted up to the larger bound (more fills its endpoint and its workspace just as well).
           -- The limit makes it a plain scan of the in-flight index, which marks the entries of
           -- released leases dead as it passes them: leases churn, and a bitmap scan would visit
           -- every one of them in the table until the next vacuum.
           SELECT e.id, e.workspace_id, e.removed_at IS NULL AND e.disabled_at IS NULL AS open,
                  (SELECT count(*) FROM (SELECT FROM webhook_deliveries l
                                          WHERE l.endpoint_id = e.id AND l.lease_until IS NOT NULL AND l.lease_until > now()
                                          LIMIT greatest($2::int, $3::int)) l) AS busy
             FROM webhook_endpoints e
            WHERE e.removed_at IS NULL OR e.removed_at > now() - $1 * interval '1 millisecond'
         ), workspace_load AS (
           SELECT workspace_id, sum(busy) AS n FROM endpoints GROUP BY workspace_id
         ), due AS (
           -- Each endpoint's oldest due deliveries, as many as it has free places (test events are never due).
           SELECT c.id, c.next_attempt_at, e.workspace_id, e.busy + c.place AS endpoint_place
             FROM endpoints e
            CROSS JOIN LATERAL (
              SELECT d.id, d.next_attempt_at, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS place
                FROM webhook_deliveries d
               WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until <= now())
               ORDER BY d.next_attempt_at, d.id
               LIMIT greatest($2 - e.busy, 0)
            ) c
            WHERE e.open
         ), fair AS (
           SELECT due.id, due.next_attempt_at, due.endpoint_place,
                  coalesce(wl.n, 0) + row_number() OVER (PARTITION BY due.workspace_id ORDER BY due.endpoint_place, due.next_attempt_at, due.id) AS workspace_place
             FROM due LEFT JOIN workspace_load wl ON wl.workspace_id = due.workspace_id
         ), chosen AS (
           SELECT id FROM fair WHERE workspace_place <= $3 ORDER BY workspace_place, next_attempt_at, id LIMIT $4
         )
         UPDATE webhook_deliveries d SET lease_until = now() + $1 * interval '1 millisecond', updated_at = now()
           FROM webhook_endpoints e, webhook_events ev
          -- The chosen ids as one array: each row is then fetched by its key, whatever the planner
          -- guesses of the just-filled table (a join with \`chosen\` was planned as a rescan per pending row).
          WHERE d.id = ANY (ARRAY(SELECT id FROM chosen)) AND e.id = d.endpoint_id AND ev.id = d.event_id AND NOT ev.test
            -- Checked again on the row itself: an operator's attempt may have taken it meanwhile.
            AND d.state = 'pending' AND (d.lease_until IS NULL OR d.lease_until <= now()) AND e.removed_at IS NULL AND e.disabled_at IS NULL
          RETURNING ${RETURNED}`,
        [bounds.leaseMs, bounds.perEndpoint, bounds.perWorkspace, limit],
      )
    ).rows.map(toClaimed);
  // The embedded database runs every statement alone in its one session: there one statement
  // cannot interleave with another claim.
  if (db.kind === 'embedded') return claim(db);
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1, $2)', [...CLAIM_LOCK]);
    return claim(tx);
  });
}
