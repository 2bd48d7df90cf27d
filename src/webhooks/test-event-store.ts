/** Test events (`webhook test`): recorded in an endpoint's delivery log, attempted once, never retried. */
import type { Database } from '../db/database.ts';
import { newId } from '../db/ids.ts';
import { InputError } from '../input-error.ts';
import type { ClaimedDelivery } from './claim-store.ts';
import { noEndpoint } from './endpoint-store.ts';
import type { EventType } from './event-types.ts';
import type { AttemptOutcome } from './send-attempt.ts';

/**
 * A test event for one endpoint (`webhook test`), kept in its delivery log with its body, ready
 * for its one attempt: no claim of scheduled attempts ever takes it, so nothing retries it. `body` makes the
 * body from the event id and whether the endpoint has participant data. A removed endpoint is
 * refused; a disabled one is not (a test checks its receiver before it is enabled again).
 */
export async function recordTestEvent(
  db: Database,
  endpointId: string,
  type: EventType,
  body: (eventId: string, withParticipant: boolean) => string,
): Promise<{ eventId: string; deliveryId: string; disabled: boolean }> {
  return db.transaction(async (tx) => {
    const found = await tx.query<{ workspace_id: string; participants: boolean; removed: boolean; disabled: boolean }>(
      'SELECT workspace_id, participants, removed_at IS NOT NULL AS removed, disabled_at IS NOT NULL AS disabled FROM webhook_endpoints WHERE id = $1 FOR SHARE',
      [endpointId],
    );
    const endpoint = found.rows[0];
    if (!endpoint) throw noEndpoint(endpointId);
    if (endpoint.removed) throw new InputError(`Webhook endpoint ${endpointId} has been removed`);
    const eventId = newId('evt');
    const recorded = await tx.query<{ id: string }>(
      `WITH event AS (
         INSERT INTO webhook_events (id, workspace_id, type, booking_id, test) VALUES ($1, $2, $3, NULL, true) RETURNING id
       )
       INSERT INTO webhook_deliveries (event_id, endpoint_id, state, next_attempt_at, body)
       SELECT id, $4, 'pending', NULL, $5 FROM event RETURNING id`,
      [eventId, endpoint.workspace_id, type, endpointId, body(eventId, endpoint.participants)],
    );
    return { eventId, deliveryId: recorded.rows[0]!.id, disabled: endpoint.disabled };
  });
}

/**
 * The one attempt of a test event, in the log as a manual attempt: the delivery is final at once
 * (never retried), and nothing about it counts toward disabling the endpoint, a 410 included.
 */
export async function recordTestAttempt(db: Database, delivery: ClaimedDelivery, startedAt: Date, outcome: AttemptOutcome): Promise<void> {
  await db.query(
    `WITH delivery AS (
       UPDATE webhook_deliveries
          SET lease_until = NULL, updated_at = now(), next_attempt_at = NULL, finished_at = now(),
              state = CASE WHEN $2 THEN 'succeeded' ELSE 'failed' END::webhook_delivery_state
        WHERE id = $1
        RETURNING id, series
     )
     INSERT INTO webhook_attempts (delivery_id, series, number, manual, started_at, duration_ms, http_status, error, next_attempt_at)
     SELECT id, series, NULL, true, $3, $4, $5, $6, NULL FROM delivery`,
    [delivery.id, outcome.ok, startedAt, outcome.durationMs, outcome.httpStatus, outcome.error],
  );
}
