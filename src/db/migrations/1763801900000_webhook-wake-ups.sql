-- Up Migration

-- docs/architecture.md, "Webhook isolation": a statement that records pending deliveries announces
-- them with one notification on `webhook_deliveries_due` (sent at commit; the notifications of one
-- transaction collapse into one), which the workers' dispatchers listen to, instead of one
-- graphile-worker job per delivery: the deliveries are the queue, and a job per delivery cost the
-- database an insert, a fetch and a completion that only said "look". A worker that is away when
-- a notification is sent finds the deliveries at its start and at its idle poll.
CREATE OR REPLACE FUNCTION record_bookings_created_of(p_workspace_ids text[], p_booking_ids text[]) RETURNS void
  LANGUAGE plpgsql
  AS $$
DECLARE
  v_pending integer;
BEGIN
  WITH events AS (
    INSERT INTO webhook_events (workspace_id, type, booking_id)
    SELECT workspace_id, 'booking.created', id FROM unnest(p_workspace_ids, p_booking_ids) AS new_bookings (workspace_id, id)
    ON CONFLICT (booking_id, transaction_id) DO UPDATE
      SET type = 'booking.created', closing = false, with_participant = false, booking_before = NULL, participant_before = NULL
    RETURNING id, workspace_id
  ), deliveries AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id, state, next_attempt_at, finished_at)
    SELECT events.id, endpoints.id,
           CASE WHEN endpoints.disabled_at IS NULL THEN 'pending' ELSE 'failed' END::webhook_delivery_state,
           CASE WHEN endpoints.disabled_at IS NULL THEN now() END,
           CASE WHEN endpoints.disabled_at IS NOT NULL THEN now() END
      FROM events JOIN webhook_endpoints endpoints
        ON endpoints.workspace_id = events.workspace_id AND endpoints.removed_at IS NULL AND 'booking.created' = ANY (endpoints.event_types)
    RETURNING id, state
  )
  SELECT count(*) INTO v_pending FROM deliveries WHERE state = 'pending';
  IF v_pending > 0 THEN
    PERFORM pg_notify('webhook_deliveries_due', '');
  END IF;
END
$$;

CREATE OR REPLACE FUNCTION close_booking_updated_events() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  v_pending integer;
BEGIN
  WITH open AS (
    SELECT e.id, e.workspace_id, b.id IS NOT NULL AS exists,
           to_jsonb(b) AS booking_after,
           CASE WHEN e.with_participant THEN to_jsonb(p) END AS participant_after,
           booking_changed_visibly(jsonb_populate_record(NULL::bookings, e.booking_before), b) AS booking_changed,
           e.with_participant AND participant_changed_visibly(jsonb_populate_record(NULL::participants, e.participant_before), p) AS participant_changed
      FROM webhook_events e
      LEFT JOIN bookings b ON b.id = e.booking_id
      LEFT JOIN participants p ON p.booking_id = e.booking_id
     WHERE e.closing AND e.transaction_id = txid_current()
  ), dropped AS (
    DELETE FROM webhook_events e USING open
     WHERE e.id = open.id AND NOT (open.exists AND (open.booking_changed OR open.participant_changed))
  ), closed AS (
    UPDATE webhook_events e SET closing = false, booking_after = open.booking_after, participant_after = open.participant_after
      FROM open
     WHERE e.id = open.id AND open.exists AND (open.booking_changed OR open.participant_changed)
    RETURNING e.id, e.workspace_id, open.booking_changed
  ), deliveries AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id, state, next_attempt_at, finished_at)
    SELECT closed.id, endpoints.id,
           CASE WHEN endpoints.disabled_at IS NULL THEN 'pending' ELSE 'failed' END::webhook_delivery_state,
           CASE WHEN endpoints.disabled_at IS NULL THEN now() END,
           CASE WHEN endpoints.disabled_at IS NOT NULL THEN now() END
      FROM closed JOIN webhook_endpoints endpoints
        ON endpoints.workspace_id = closed.workspace_id AND endpoints.removed_at IS NULL AND 'booking.updated' = ANY (endpoints.event_types)
       AND (closed.booking_changed OR endpoints.participants)
    RETURNING id, state
  )
  SELECT count(*) INTO v_pending FROM deliveries WHERE state = 'pending';
  IF v_pending > 0 THEN
    PERFORM pg_notify('webhook_deliveries_due', '');
  END IF;
  RETURN NULL;
END
$$;

-- Down Migration
CREATE OR REPLACE FUNCTION record_bookings_created_of(p_workspace_ids text[], p_booking_ids text[]) RETURNS void
  LANGUAGE plpgsql
  AS $$
DECLARE
  v_jobs integer;
BEGIN
  WITH events AS (
    INSERT INTO webhook_events (workspace_id, type, booking_id)
    SELECT workspace_id, 'booking.created', id FROM unnest(p_workspace_ids, p_booking_ids) AS new_bookings (workspace_id, id)
    ON CONFLICT (booking_id, transaction_id) DO UPDATE
      SET type = 'booking.created', closing = false, with_participant = false, booking_before = NULL, participant_before = NULL
    RETURNING id, workspace_id
  ), deliveries AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id, state, next_attempt_at, finished_at)
    SELECT events.id, endpoints.id,
           CASE WHEN endpoints.disabled_at IS NULL THEN 'pending' ELSE 'failed' END::webhook_delivery_state,
           CASE WHEN endpoints.disabled_at IS NULL THEN now() END,
           CASE WHEN endpoints.disabled_at IS NOT NULL THEN now() END
      FROM events JOIN webhook_endpoints endpoints
        ON endpoints.workspace_id = events.workspace_id AND endpoints.removed_at IS NULL AND 'booking.created' = ANY (endpoints.event_types)
    RETURNING id, state
  ), specs AS (
    SELECT array_agg(ROW('webhook_deliver', json_build_object('deliveryId', id), NULL, NULL, NULL, id, NULL, NULL)::graphile_worker.job_spec) AS list
      FROM deliveries WHERE state = 'pending'
  )
  SELECT count(*) INTO v_jobs
    FROM specs, LATERAL graphile_worker.add_jobs(specs.list)
   WHERE specs.list IS NOT NULL;
END
$$;

CREATE OR REPLACE FUNCTION close_booking_updated_events() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  v_jobs integer;
BEGIN
  WITH open AS (
    SELECT e.id, e.workspace_id, b.id IS NOT NULL AS exists,
           to_jsonb(b) AS booking_after,
           CASE WHEN e.with_participant THEN to_jsonb(p) END AS participant_after,
           booking_changed_visibly(jsonb_populate_record(NULL::bookings, e.booking_before), b) AS booking_changed,
           e.with_participant AND participant_changed_visibly(jsonb_populate_record(NULL::participants, e.participant_before), p) AS participant_changed
      FROM webhook_events e
      LEFT JOIN bookings b ON b.id = e.booking_id
      LEFT JOIN participants p ON p.booking_id = e.booking_id
     WHERE e.closing AND e.transaction_id = txid_current()
  ), dropped AS (
    DELETE FROM webhook_events e USING open
     WHERE e.id = open.id AND NOT (open.exists AND (open.booking_changed OR open.participant_changed))
  ), closed AS (
    UPDATE webhook_events e SET closing = false, booking_after = open.booking_after, participant_after = open.participant_after
      FROM open
     WHERE e.id = open.id AND open.exists AND (open.booking_changed OR open.participant_changed)
    RETURNING e.id, e.workspace_id, open.booking_changed
  ), deliveries AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id, state, next_attempt_at, finished_at)
    SELECT closed.id, endpoints.id,
           CASE WHEN endpoints.disabled_at IS NULL THEN 'pending' ELSE 'failed' END::webhook_delivery_state,
           CASE WHEN endpoints.disabled_at IS NULL THEN now() END,
           CASE WHEN endpoints.disabled_at IS NOT NULL THEN now() END
      FROM closed JOIN webhook_endpoints endpoints
        ON endpoints.workspace_id = closed.workspace_id AND endpoints.removed_at IS NULL AND 'booking.updated' = ANY (endpoints.event_types)
       AND (closed.booking_changed OR endpoints.participants)
    RETURNING id, state
  ), specs AS (
    SELECT array_agg(ROW('webhook_deliver', json_build_object('deliveryId', id), NULL, NULL, NULL, id, NULL, NULL)::graphile_worker.job_spec) AS list
      FROM deliveries WHERE state = 'pending'
  )
  SELECT count(*) INTO v_jobs
    FROM specs, LATERAL graphile_worker.add_jobs(specs.list)
   WHERE specs.list IS NOT NULL;
  RETURN NULL;
END
$$;
