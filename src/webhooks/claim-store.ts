import type { Database } from '../db/database.ts';
import type { EventType } from './event-types.ts';

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

/** The columns `RETURNED` lists, in its order. */
type ClaimColumns = [
  id: string,
  attempts: number,
  series: number,
  body: string | null,
  endpointId: string,
  workspaceId: string,
  url: string,
  secretCiphertext: Buffer,
  participants: boolean,
  previousSecretCiphertext: Buffer | null,
  eventId: string,
  eventType: EventType,
  test: boolean,
  bookingId: string | null,
  eventCreatedAt: Date,
  leaseUntil: Date,
];

const toClaimed = (row: unknown[]): ClaimedDelivery => {
  const [id, attempts, series, body, endpointId, workspaceId, url, secretCiphertext, participants, previousSecretCiphertext, eventId, eventType, test, bookingId, eventCreatedAt, leaseUntil] =
    row as ClaimColumns;
  return { id, attempts, series, body, endpointId, workspaceId, url, secretCiphertext, previousSecretCiphertext, participants, eventId, eventType, test, bookingId, eventCreatedAt, leaseUntil };
};

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
  const claimed = await db.queryArrays(
    `UPDATE webhook_deliveries d SET lease_until = now() + $2 * interval '1 millisecond', updated_at = now()
       FROM webhook_endpoints e, webhook_events ev
      WHERE d.id = $1 AND e.id = d.endpoint_id AND ev.id = d.event_id AND e.removed_at IS NULL AND (e.disabled_at IS NULL OR $3 = 'test')
        AND ev.test = ($3 = 'test') AND (d.lease_until IS NULL OR d.lease_until < now())
      RETURNING ${RETURNED}`,
    [deliveryId, leaseMs, kind],
  );
  return claimed[0] ? toClaimed(claimed[0]) : null;
}

/** docs/architecture.md, "Webhook isolation": how many scheduled attempts may be in flight at once, across all workers. */
export interface AttemptBounds {
  perEndpoint: number;
  perWorkspace: number;
  /** How long a lease lasts from the attempt's start (longer than the attempt may take). */
  leaseMs: number;
}

/**
 * docs/architecture.md, "Webhook isolation": takes the leases of up to `limit` pending, due
 * deliveries of enabled endpoints, in a fair order, in one statement. An attempt in flight is a
 * lease that has not expired (released when the attempt is recorded, expiring by itself when a
 * killed worker cannot release it); no endpoint gets more than `perEndpoint` of them, no workspace
 * more than `perWorkspace`. Each workspace's first free place is handed out before any
 * workspace's second, and within a workspace each endpoint's before any endpoint's second, oldest
 * due first: an endpoint with a backlog cannot starve another. The claims of all workers take
 * turns (a transaction-scoped advisory lock, held for this one call) so that two of them never
 * both see the last free place; a claim holds one connection and never waits on a delivery. The
 * statement is the function `claim_due_webhook_deliveries` (migration 1763802037000): the lock and
 * the claim in one round trip, prepared by name; migration 1763802137000 leases the chosen rows by
 * key. `answered` are the claiming worker's attempts whose receivers answered with a success and
 * whose outcomes are not recorded yet: they hold their leases (nobody attempts them again) but no
 * longer count toward the bounds, since they send nothing more.
 */
export async function claimDue(db: Database, bounds: AttemptBounds, limit: number, answered: readonly string[] = []): Promise<ClaimedDelivery[]> {
  const rows = await db.queryArrays('SELECT * FROM claim_due_webhook_deliveries($1, $2, $3, $4, $5)', [
    bounds.leaseMs,
    bounds.perEndpoint,
    bounds.perWorkspace,
    limit,
    answered,
  ]);
  return rows.map(toClaimed);
}
