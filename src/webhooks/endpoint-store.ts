import { requireManager } from '../workspaces/member-store.ts';
import type { Database, Queryable } from '../db/database.ts';
import { InputError } from '../input-error.ts';
import { generateWebhookSecret } from '../auth/secret-format.ts';
import { newId } from '../db/ids.ts';
import { DELIVERIES_DUE_CHANNEL } from './due-listener.ts';
import { DEFAULT_EVENT_TYPES, type EventType } from './event-types.ts';
import type { SecretBox } from './secret-box.ts';
import { parseTargetUrl } from './target-guard.ts';

/** The refusal of an id no endpoint has (or none of the workspace acted on). */
export const noEndpoint = (id: string) => new InputError(`No webhook endpoint with id ${JSON.stringify(id)}`, { field: 'id' });

/** An operation that needs the endpoint enabled first. */
export class EndpointDisabledError extends InputError {
  constructor(readonly endpointId: string) {
    super(`Webhook endpoint ${endpointId} is disabled; enable it first`);
  }
}

export function isEndpointDisabledError(error: unknown): error is EndpointDisabledError {
  return error instanceof EndpointDisabledError;
}

export interface IssuedEndpoint {
  id: string;
  /** The signing secret: shown once, stored only encrypted. */
  secret: string;
}

export interface EndpointSummary {
  id: string;
  url: string;
  participants: boolean;
  /** The event types it receives. */
  events: EventType[];
  createdAt: string;
  state: 'active' | 'disabled' | 'removed';
  /** When it was disabled, while it is. */
  disabledAt: string | null;
  /** Why, while it is: `failing` (every attempt failed for WEBHOOK_DISABLE_AFTER_DAYS) or `gone` (its receiver answered 410). */
  disabledReason: 'failing' | 'gone' | null;
  /** Until when attempts are also signed with the secret before the last rotation. */
  previousSecretUntil: string | null;
  /** docs/webhooks.md, "Endpoint health" (null once removed). */
  health: EndpointHealth | null;
}

/**
 * `healthy`: its last attempt succeeded (or none was made); `failing`: its attempts since the last
 * success all failed; `disabled`: no attempt is made until `webhook enable`.
 */
export interface EndpointHealth {
  state: 'healthy' | 'failing' | 'disabled';
  consecutiveFailures: number;
  /** When the first of those failures started. */
  failingSince: string | null;
  /** The class of the last failure (timeout, http_status, connection_refused, ...), kept after a success. */
  lastFailure: string | null;
}

interface HealthRow {
  disabled_at: Date | null;
  consecutive_failures: number;
  failing_since: Date | null;
  last_failure: string | null;
}

const HEALTH_COLUMNS = 'disabled_at, consecutive_failures, failing_since, last_failure';

const healthOf = (row: HealthRow): EndpointHealth => ({
  state: row.disabled_at ? 'disabled' : row.consecutive_failures > 0 ? 'failing' : 'healthy',
  consecutiveFailures: row.consecutive_failures,
  failingSince: row.failing_since?.toISOString() ?? null,
  lastFailure: row.last_failure,
});

/** The health of every endpoint not removed, for /metrics. */
export async function readEndpointHealth(db: Database): Promise<Array<EndpointHealth & { id: string; disabledReason: 'failing' | 'gone' | null }>> {
  const found = await db.query<HealthRow & { id: string; disabled_reason: 'failing' | 'gone' | null }>(
    `SELECT id, disabled_reason, ${HEALTH_COLUMNS} FROM webhook_endpoints WHERE removed_at IS NULL ORDER BY id`,
  );
  return found.rows.map((row) => ({ id: row.id, disabledReason: row.disabled_at ? (row.disabled_reason ?? 'failing') : null, ...healthOf(row) }));
}

export async function addEndpoint(
  db: Queryable,
  box: SecretBox,
  input: { workspaceId: string; memberEmail: string; url: string; participants: boolean; allowPrivateTargets: boolean; events?: readonly EventType[]; urlLabel?: string },
): Promise<IssuedEndpoint> {
  const url = parseTargetUrl(input.url, input.allowPrivateTargets, input.urlLabel);
  const memberId = await requireManager(db, input.workspaceId, input.memberEmail);
  const secret = generateWebhookSecret();
  // The id is chosen first: the sealed secret is bound to it.
  const id = newId('whe');
  await db.query(
    `INSERT INTO webhook_endpoints (id, workspace_id, url, secret_ciphertext, participants, created_by, event_types) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [id, input.workspaceId, url.href, box.seal(secret, id), input.participants, memberId, input.events ?? DEFAULT_EVENT_TYPES],
  );
  return { id, secret };
}

export async function listEndpoints(db: Database, workspaceId: string): Promise<EndpointSummary[]> {
  const found = await db.query<HealthRow & {
    id: string;
    url: string;
    participants: boolean;
    event_types: EventType[];
    created_at: Date;
    removed_at: Date | null;
    disabled_at: Date | null;
    disabled_reason: 'failing' | 'gone' | null;
    previous_until: Date | null;
  }>(
    `SELECT id, url, participants, event_types, created_at, removed_at, disabled_reason, ${HEALTH_COLUMNS},
            CASE WHEN previous_secret_expires_at > now() THEN previous_secret_expires_at END AS previous_until
       FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY created_at, id`,
    [workspaceId],
  );
  return found.rows.map((row) => ({
    id: row.id,
    url: row.url,
    participants: row.participants,
    events: row.event_types,
    createdAt: row.created_at.toISOString(),
    state: row.removed_at ? 'removed' : row.disabled_at ? 'disabled' : 'active',
    disabledAt: row.removed_at ? null : (row.disabled_at?.toISOString() ?? null),
    // Endpoints disabled before reasons were recorded were disabled for failing.
    disabledReason: row.removed_at || !row.disabled_at ? null : (row.disabled_reason ?? 'failing'),
    previousSecretUntil: row.removed_at ? null : (row.previous_until?.toISOString() ?? null),
    health: row.removed_at ? null : healthOf(row),
  }));
}

/*
 * The changes below take the queryable of their caller's transaction: src/integrations runs each
 * in one with its audit entry, so that a change is never made without its entry, nor recorded
 * without being made.
 */

/**
 * An endpoint that exists and has not been removed; refused with a clear message otherwise. Its
 * row stays locked until the end of the transaction `db` runs, so that what is decided from it
 * still holds when the change is written.
 */
async function requireEndpoint(db: Queryable, id: string): Promise<{ disabled: boolean; secretCiphertext: Buffer }> {
  const found = await db.query<{ removed_at: Date | null; disabled_at: Date | null; secret_ciphertext: Buffer }>(
    'SELECT removed_at, disabled_at, secret_ciphertext FROM webhook_endpoints WHERE id = $1 FOR UPDATE',
    [id],
  );
  const row = found.rows[0];
  if (!row) throw noEndpoint(id);
  if (row.removed_at) throw new InputError(`Webhook endpoint ${id} has been removed`);
  return { disabled: row.disabled_at !== null, secretCiphertext: row.secret_ciphertext };
}

export interface RotatedSecret {
  id: string;
  /** The new signing secret: shown once. */
  secret: string;
  /** Until when attempts are also signed with the old secret (null: not at all). */
  previousSecretUntil: string | null;
}

/**
 * A new signing secret for an endpoint. For `overlapMs` after the rotation every attempt carries
 * the signatures of both the new and the old secret, so that the receiver can switch at its own
 * pace (Standard Webhooks); then only the new one. A rotation during an overlap ends the earlier
 * overlap: only the secret in use until now is kept as the previous one.
 */
export async function rotateSecret(tx: Queryable, box: SecretBox, id: string, overlapMs: number): Promise<RotatedSecret> {
  const current = await requireEndpoint(tx, id);
  // Refused before anything changes when the current secret cannot be opened: it would be unusable as the previous one.
  box.open(current.secretCiphertext, id);
  const secret = generateWebhookSecret();
  const rotated = await tx.query<{ until: Date | null }>(
    `UPDATE webhook_endpoints
        SET previous_secret_ciphertext = CASE WHEN $3::bigint > 0 THEN secret_ciphertext END,
            previous_secret_expires_at = CASE WHEN $3::bigint > 0 THEN now() + $3::bigint * interval '1 millisecond' END,
            secret_ciphertext = $2
      WHERE id = $1
      RETURNING previous_secret_expires_at AS until`,
    [id, box.seal(secret, id), overlapMs],
  );
  return { id, secret, previousSecretUntil: rotated.rows[0]!.until?.toISOString() ?? null };
}

/**
 * Turns a disabled endpoint back on: new events are delivered again, and deliveries that were
 * still pending when it was disabled resume their schedule (those due meanwhile go at once).
 */
export async function enableEndpoint(tx: Queryable, id: string): Promise<{ id: string; state: 'active'; resumed: number }> {
  await requireEndpoint(tx, id);
  // Enabled again, it starts healthy: the failures that disabled it no longer count toward disabling it again.
  await tx.query('UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, consecutive_failures = 0, failing_since = NULL WHERE id = $1', [id]);
  const resumed = await tx.query<{ resumed: string }>(`SELECT count(*) AS resumed FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending'`, [id]);
  const count = Number(resumed.rows[0]?.resumed ?? 0);
  // The workers claim those due now at the commit's notification, and arm their timers for the others.
  if (count > 0) await tx.query(`SELECT pg_notify($1, '')`, [DELIVERIES_DUE_CHANNEL]);
  return { id, state: 'active' as const, resumed: count };
}

/** The event types an endpoint receives (`webhook events`). */
export async function eventTypesOf(db: Database, id: string): Promise<{ id: string; events: EventType[] }> {
  const found = await db.query<{ event_types: EventType[] }>('SELECT event_types FROM webhook_endpoints WHERE id = $1', [id]);
  const row = found.rows[0];
  if (!row) throw noEndpoint(id);
  return { id, events: row.event_types };
}

/** `webhook events --set`: the event types an endpoint receives from now on (events recorded before keep their deliveries). */
export async function setEventTypes(tx: Queryable, id: string, events: readonly EventType[]): Promise<{ id: string; events: EventType[] }> {
  await requireEndpoint(tx, id);
  const updated = await tx.query<{ event_types: EventType[] }>('UPDATE webhook_endpoints SET event_types = $2 WHERE id = $1 RETURNING event_types', [id, events]);
  return { id, events: updated.rows[0]!.event_types };
}

/** A new address for an endpoint, checked as at registration; pending deliveries go there from their next attempt. */
export async function setEndpointUrl(tx: Queryable, id: string, url: URL): Promise<{ id: string; url: string }> {
  await requireEndpoint(tx, id);
  await tx.query('UPDATE webhook_endpoints SET url = $2 WHERE id = $1', [id, url.href]);
  return { id, url: url.href };
}

export interface RecoveryResult {
  endpoint: string;
  since: string;
  /** How many failed deliveries start a new series of attempts. */
  recovered: number;
}

/**
 * `webhook recover`: every delivery of the endpoint whose event was recorded at or after `since`
 * and that failed (all its attempts, or recorded while the endpoint was disabled) starts a new
 * series of up to 8 attempts with the same event id, queued in the events' creation order. The
 * stored body is sent again when it is still kept; an erased one is built afresh from the booking.
 */
export async function recoverDeliveries(tx: Queryable, endpointId: string, since: Date): Promise<RecoveryResult> {
  const endpoint = await requireEndpoint(tx, endpointId);
  if (endpoint.disabled) throw new EndpointDisabledError(endpointId);
  const recovered = await tx.query<{ id: string }>(
    `WITH failed AS (
       SELECT d.id FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
        WHERE d.endpoint_id = $1 AND d.state = 'failed' AND ev.created_at >= $2 AND NOT ev.test
        ORDER BY ev.created_at, ev.id
        FOR UPDATE OF d
     )
     UPDATE webhook_deliveries d
        SET state = 'pending', series = d.series + 1, attempts = 0, next_attempt_at = now(), finished_at = NULL, lease_until = NULL, updated_at = now()
       FROM failed WHERE d.id = failed.id
     RETURNING d.id`,
    [endpointId, since],
  );
  const ids = recovered.rows.map((row) => row.id);
  // Due now: the workers claim them at the commit's notification.
  if (ids.length > 0) await tx.query(`SELECT pg_notify($1, '')`, [DELIVERIES_DUE_CHANNEL]);
  return { endpoint: endpointId, since: since.toISOString(), recovered: ids.length };
}

/**
 * A removed endpoint gets no new events, and its pending deliveries stop. A worker's claim may be
 * leasing some of those deliveries at the same moment, in another order: the caller's
 * transaction is to be run again when it was the deadlock's victim (`transactionRetryingDeadlocks`).
 */
export async function removeEndpoint(tx: Queryable, id: string): Promise<{ id: string; state: 'removed' }> {
  const updated = await tx.query('UPDATE webhook_endpoints SET removed_at = coalesce(removed_at, now()) WHERE id = $1', [id]);
  if (updated.rowCount === 0) throw noEndpoint(id);
  await tx.query(
    `UPDATE webhook_deliveries SET state = 'cancelled', next_attempt_at = NULL, finished_at = now(), updated_at = now() WHERE endpoint_id = $1 AND state = 'pending'`,
    [id],
  );
  return { id, state: 'removed' as const };
}
