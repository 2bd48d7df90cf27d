import { requireManager } from '../auth/members.ts';
import type { Database } from '../db/database.ts';
import { InputError } from '../input-error.ts';
import { generateWebhookSecret } from '../auth/secret-format.ts';
import type { SecretBox } from './secret-box.ts';
import { parseTargetUrl } from './target-guard.ts';

export interface IssuedEndpoint {
  id: string;
  /** The signing secret: shown once, stored only encrypted. */
  secret: string;
}

export interface EndpointSummary {
  id: string;
  url: string;
  participants: boolean;
  createdAt: string;
  state: 'active' | 'removed';
}

export async function addEndpoint(
  db: Database,
  box: SecretBox,
  input: { workspaceId: string; memberEmail: string; url: string; participants: boolean; allowPrivateTargets: boolean },
): Promise<IssuedEndpoint> {
  const url = parseTargetUrl(input.url, input.allowPrivateTargets);
  const memberId = await requireManager(db, input.workspaceId, input.memberEmail);
  const secret = generateWebhookSecret();
  const inserted = await db.query<{ id: string }>(
    `INSERT INTO webhook_endpoints (workspace_id, url, secret_ciphertext, participants, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [input.workspaceId, url.href, box.seal(secret), input.participants, memberId],
  );
  return { id: inserted.rows[0]!.id, secret };
}

export async function listEndpoints(db: Database, workspaceId: string): Promise<EndpointSummary[]> {
  const found = await db.query<{ id: string; url: string; participants: boolean; created_at: Date; removed_at: Date | null }>(
    'SELECT id, url, participants, created_at, removed_at FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY created_at, id',
    [workspaceId],
  );
  return found.rows.map((row) => ({
    id: row.id,
    url: row.url,
    participants: row.participants,
    createdAt: row.created_at.toISOString(),
    state: row.removed_at ? 'removed' : 'active',
  }));
}

/** A removed endpoint gets no new events, and its pending deliveries stop. */
export async function removeEndpoint(db: Database, id: string): Promise<{ id: string; state: 'removed' }> {
  return db.transaction(async (client) => {
    const updated = await client.query('UPDATE webhook_endpoints SET removed_at = coalesce(removed_at, now()) WHERE id = $1', [id]);
    if (updated.rowCount === 0) throw new InputError(`No webhook endpoint with id ${JSON.stringify(id)}`);
    await client.query(`UPDATE webhook_deliveries SET state = 'cancelled', next_attempt_at = NULL, updated_at = now() WHERE endpoint_id = $1 AND state = 'pending'`, [id]);
    return { id, state: 'removed' as const };
  });
}

export interface AttemptLogEntry {
  number: number | null;
  manual: boolean;
  startedAt: string;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
  nextAttemptAt: string | null;
}

export interface DeliverySummary {
  id: string;
  eventId: string;
  state: 'pending' | 'succeeded' | 'failed' | 'cancelled';
  attempts: number;
  nextAttemptAt: string | null;
  log: AttemptLogEntry[];
}

/** The delivery log of an endpoint: its newest 100 deliveries (or one event's), each with every attempt. */
export async function listDeliveries(db: Database, endpointId: string, eventId?: string): Promise<DeliverySummary[]> {
  const endpoint = await db.query('SELECT 1 FROM webhook_endpoints WHERE id = $1', [endpointId]);
  if (endpoint.rowCount === 0) throw new InputError(`No webhook endpoint with id ${JSON.stringify(endpointId)}`);
  const deliveries = await db.query<{ id: string; event_id: string; state: DeliverySummary['state']; attempts: number; next_attempt_at: Date | null }>(
    `SELECT id, event_id, state, attempts, next_attempt_at FROM webhook_deliveries
      WHERE endpoint_id = $1 AND ($2::text IS NULL OR event_id = $2)
      ORDER BY created_at DESC, id DESC LIMIT 100`,
    [endpointId, eventId ?? null],
  );
  if (eventId && deliveries.rowCount === 0) throw new InputError(`Event ${eventId} has no delivery to endpoint ${endpointId}`);
  const attempts = await db.query<{
    delivery_id: string;
    number: number | null;
    manual: boolean;
    started_at: Date;
    duration_ms: number;
    http_status: number | null;
    error: string | null;
    next_attempt_at: Date | null;
  }>(
    `SELECT delivery_id, number, manual, started_at, duration_ms, http_status, error, next_attempt_at
       FROM webhook_attempts WHERE delivery_id = ANY($1) ORDER BY started_at, id`,
    [deliveries.rows.map((row) => row.id)],
  );
  return deliveries.rows.map((row) => ({
    id: row.id,
    eventId: row.event_id,
    state: row.state,
    attempts: row.attempts,
    nextAttemptAt: row.state === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    log: attempts.rows
      .filter((attempt) => attempt.delivery_id === row.id)
      .map((attempt) => ({
        number: attempt.number,
        manual: attempt.manual,
        startedAt: attempt.started_at.toISOString(),
        durationMs: attempt.duration_ms,
        httpStatus: attempt.http_status,
        error: attempt.error,
        nextAttemptAt: attempt.next_attempt_at?.toISOString() ?? null,
      })),
  }));
}

/** The delivery of an event to an endpoint, for a manual redelivery. */
export async function findDelivery(db: Database, eventId: string, endpointId: string): Promise<string> {
  const found = await db.query<{ id: string; removed: boolean }>(
    `SELECT d.id, e.removed_at IS NOT NULL AS removed FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.event_id = $1 AND d.endpoint_id = $2`,
    [eventId, endpointId],
  );
  const delivery = found.rows[0];
  if (!delivery) {
    throw new InputError(`Event ${JSON.stringify(eventId)} has no delivery to endpoint ${JSON.stringify(endpointId)} (events go only to endpoints registered when they were recorded)`);
  }
  if (delivery.removed) throw new InputError(`Webhook endpoint ${endpointId} has been removed`);
  return delivery.id;
}
