/** What operators read of deliveries: an endpoint's delivery log, and one delivery to send again by hand. */
import type { Database } from '../db/database.ts';
import { InputError } from '../input-error.ts';
import { EndpointDisabledError, noEndpoint } from './endpoint-store.ts';
import type { EventType } from './event-types.ts';

export interface AttemptLogEntry {
  /** 1, and one more for each `webhook recover` of the delivery. */
  series: number;
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
  eventType: EventType;
  /** A test event (`webhook test`): one attempt, never retried. */
  test: boolean;
  state: 'pending' | 'succeeded' | 'failed' | 'cancelled';
  attempts: number;
  series: number;
  nextAttemptAt: string | null;
  /** When the stored body was erased (WEBHOOK_BODY_RETENTION_DAYS after the final state); null while kept. */
  bodyErasedAt: string | null;
  log: AttemptLogEntry[];
}

/** The delivery log of an endpoint: its newest 100 deliveries (or one event's), each with every attempt. */
export async function listDeliveries(db: Database, endpointId: string, eventId?: string): Promise<DeliverySummary[]> {
  const endpoint = await db.query('SELECT 1 FROM webhook_endpoints WHERE id = $1', [endpointId]);
  if (endpoint.rowCount === 0) throw noEndpoint(endpointId);
  const deliveries = await db.query<{
    id: string;
    event_id: string;
    event_type: EventType;
    test: boolean;
    state: DeliverySummary['state'];
    attempts: number;
    series: number;
    next_attempt_at: Date | null;
    body_erased_at: Date | null;
  }>(
    `SELECT d.id, d.event_id, ev.type AS event_type, ev.test, d.state, d.attempts, d.series, d.next_attempt_at, d.body_erased_at
       FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
      WHERE d.endpoint_id = $1 AND ($2::text IS NULL OR d.event_id = $2)
      ORDER BY d.created_at DESC, d.id DESC LIMIT 100`,
    [endpointId, eventId ?? null],
  );
  if (eventId && deliveries.rowCount === 0) throw new InputError(`Event ${eventId} has no delivery to endpoint ${endpointId}`);
  const attempts = await db.query<{
    delivery_id: string;
    series: number;
    number: number | null;
    manual: boolean;
    started_at: Date;
    duration_ms: number;
    http_status: number | null;
    error: string | null;
    next_attempt_at: Date | null;
  }>(
    `SELECT delivery_id, series, number, manual, started_at, duration_ms, http_status, error, next_attempt_at
       FROM webhook_attempts WHERE delivery_id = ANY($1) ORDER BY started_at, id`,
    [deliveries.rows.map((row) => row.id)],
  );
  return deliveries.rows.map((row) => ({
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    test: row.test,
    state: row.state,
    attempts: row.attempts,
    series: row.series,
    nextAttemptAt: row.state === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    bodyErasedAt: row.body_erased_at?.toISOString() ?? null,
    log: attempts.rows
      .filter((attempt) => attempt.delivery_id === row.id)
      .map((attempt) => ({
        series: attempt.series,
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
  const found = await db.query<{ id: string; removed: boolean; disabled: boolean; test: boolean }>(
    `SELECT d.id, e.removed_at IS NOT NULL AS removed, e.disabled_at IS NOT NULL AS disabled, ev.test
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id JOIN webhook_events ev ON ev.id = d.event_id
      WHERE d.event_id = $1 AND d.endpoint_id = $2`,
    [eventId, endpointId],
  );
  const delivery = found.rows[0];
  if (!delivery) {
    throw new InputError(`Event ${JSON.stringify(eventId)} has no delivery to endpoint ${JSON.stringify(endpointId)} (events go only to endpoints registered when they were recorded)`);
  }
  if (delivery.test) throw new InputError(`Event ${eventId} is a test event, which is never sent again; send a new one with webhook test --endpoint ${endpointId}`);
  if (delivery.removed) throw new InputError(`Webhook endpoint ${endpointId} has been removed`);
  if (delivery.disabled) throw new EndpointDisabledError(endpointId);
  return delivery.id;
}
