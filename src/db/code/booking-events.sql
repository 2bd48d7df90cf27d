-- The webhook events of bookings, written by triggers in the writing transaction, whoever writes
-- (docs/webhooks.md): booking.created for every booking inserted, booking.updated for every
-- committed transaction that changes what a booking looks like in the public representation.
-- Replication fires row triggers only: the `_in_replica` triggers fire in replica role only,
-- beside the statement triggers that serve every other role (see data-versions.sql).

-- What the public representation shows of a booking and of its participant (the fields of the
-- fixed operations' `PublicBooking` fragment, timestamps to the millisecond): a change elsewhere
-- is no change to a receiver. test/unit/booking-updated-columns.test.ts checks these columns
-- against the resource registry and the fragment.
CREATE OR REPLACE FUNCTION booking_changed_visibly(o bookings, n bookings) RETURNS boolean
  LANGUAGE sql STABLE
  AS $$
  SELECT (o.course_run_id, o.source, o.status, date_trunc('milliseconds', o.created_at), date_trunc('milliseconds', o.updated_at))
         IS DISTINCT FROM (n.course_run_id, n.source, n.status, date_trunc('milliseconds', n.created_at), date_trunc('milliseconds', n.updated_at))
$$;

CREATE OR REPLACE FUNCTION participant_changed_visibly(o participants, n participants) RETURNS boolean
  LANGUAGE sql STABLE
  AS $$ SELECT (o.name, o.email) IS DISTINCT FROM (n.name, n.email) $$;

-- The events, deliveries and wake-up of the given bookings; the statement trigger passes all its
-- new rows, the replica row trigger its one. booking.created goes to the endpoints subscribed to
-- it; an endpoint disabled now gets a delivery that is failed from the start, without an attempt,
-- so that `webhook recover` can send it once the endpoint is enabled again. Where a
-- booking.updated of the booking was opened first in this transaction (its participant's trigger
-- fired before the booking's, in one statement), that event becomes the booking.created. A
-- statement that records pending deliveries announces them with one notification on
-- `webhook_deliveries_due` (sent at commit; the notifications of one transaction collapse into
-- one), which the workers' dispatchers listen to (docs/architecture.md, "Webhook isolation").
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

-- Runs in the inserting statement's transaction: the events and their deliveries commit or roll
-- back together with the bookings. Once per statement, over all its new rows, so that a bulk
-- insert (an import) costs a few statements here, not a few per booking. Both aggregates read the
-- rows in one pass, so the two arrays pair each booking with its workspace.
CREATE OR REPLACE FUNCTION record_bookings_created() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM record_bookings_created_of(array_agg(workspace_id), array_agg(id)) FROM new_bookings HAVING count(*) > 0;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION record_replicated_booking_created() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('session_replication_role') = 'replica' THEN
    PERFORM record_bookings_created_of(ARRAY[NEW.workspace_id], ARRAY[NEW.id]);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER bookings_record_created AFTER INSERT ON bookings
  REFERENCING NEW TABLE AS new_bookings
  FOR EACH STATEMENT EXECUTE FUNCTION record_bookings_created();
CREATE TRIGGER bookings_record_created_in_replica AFTER INSERT ON bookings
  FOR EACH ROW EXECUTE FUNCTION record_replicated_booking_created();
ALTER TABLE bookings ENABLE REPLICA TRIGGER bookings_record_created_in_replica;

-- Opens the booking.updated event of each given booking in this transaction, unless it has one (an
-- earlier change, or its booking.created): the first change keeps the state before the transaction.
-- Only where an endpoint of the workspace subscribes to booking.updated; a change of the
-- participant alone only where one of them has participant data (the others see no change), and
-- the participant is kept only then. `p_source` says which rows changed: `bookings` (`p_before`:
-- the bookings' rows before) or `participants` (`p_before`: the participant rows before, null
-- where there was none).
CREATE OR REPLACE FUNCTION record_bookings_updated_of(p_source text, p_booking_ids text[], p_before jsonb[]) RETURNS void
  LANGUAGE plpgsql
  AS $$
BEGIN
  INSERT INTO webhook_events (workspace_id, type, booking_id, closing, with_participant, booking_before, participant_before)
  SELECT b.workspace_id, 'booking.updated', b.id, true, s.participants,
         CASE WHEN p_source = 'bookings' THEN c.before ELSE to_jsonb(b) END,
         CASE WHEN NOT s.participants THEN NULL
              WHEN p_source = 'participants' THEN c.before
              ELSE (SELECT to_jsonb(p) FROM participants p WHERE p.booking_id = b.id) END
    FROM unnest(p_booking_ids, p_before) AS c (booking_id, before)
    JOIN bookings b ON b.id = c.booking_id
    CROSS JOIN LATERAL (
      SELECT bool_or(e.participants) AS participants FROM webhook_endpoints e
       WHERE e.workspace_id = b.workspace_id AND e.removed_at IS NULL AND 'booking.updated' = ANY (e.event_types)
    ) s
   WHERE s.participants OR (p_source = 'bookings' AND s.participants IS NOT NULL)
   ORDER BY b.id
  ON CONFLICT (booking_id, transaction_id) DO NOTHING;
END
$$;

-- Once per statement, over all its rows; a booking that has its event in this transaction already
-- (its booking.created, or an earlier change), or a workspace without a subscribed endpoint, costs
-- this one statement and nothing more.
CREATE OR REPLACE FUNCTION record_bookings_updated() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM record_bookings_updated_of('bookings', array_agg(n.id), array_agg(to_jsonb(o)))
     FROM old_rows o JOIN new_rows n ON n.id = o.id
    WHERE booking_changed_visibly(o, n)
      AND NOT EXISTS (SELECT 1 FROM webhook_events ev WHERE ev.booking_id = n.id AND ev.transaction_id = txid_current())
      AND EXISTS (SELECT 1 FROM webhook_endpoints e
                   WHERE e.workspace_id = n.workspace_id AND e.removed_at IS NULL AND 'booking.updated' = ANY (e.event_types))
   HAVING count(*) > 0;
  RETURN NULL;
END
$$;

-- A participant inserted, changed (or moved to another booking) or deleted changes its booking(s).
-- A participant deleted with its booking finds no booking: no event.
CREATE OR REPLACE FUNCTION record_participants_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM record_bookings_updated_of('participants', array_agg(n.booking_id), array_agg(NULL::jsonb))
       FROM new_rows n JOIN bookings b ON b.id = n.booking_id
      WHERE NOT EXISTS (SELECT 1 FROM webhook_events ev WHERE ev.booking_id = b.id AND ev.transaction_id = txid_current())
        AND EXISTS (SELECT 1 FROM webhook_endpoints e
                     WHERE e.workspace_id = b.workspace_id AND e.removed_at IS NULL AND e.participants AND 'booking.updated' = ANY (e.event_types))
     HAVING count(*) > 0;
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM record_bookings_updated_of('participants', array_agg(b.id), array_agg(to_jsonb(o)))
       FROM old_rows o FULL JOIN new_rows n ON n.booking_id = o.booking_id
       JOIN bookings b ON b.id = coalesce(n.booking_id, o.booking_id)
      WHERE participant_changed_visibly(o, n)
        AND NOT EXISTS (SELECT 1 FROM webhook_events ev WHERE ev.booking_id = b.id AND ev.transaction_id = txid_current())
        AND EXISTS (SELECT 1 FROM webhook_endpoints e
                     WHERE e.workspace_id = b.workspace_id AND e.removed_at IS NULL AND e.participants AND 'booking.updated' = ANY (e.event_types))
     HAVING count(*) > 0;
  ELSE
    PERFORM record_bookings_updated_of('participants', array_agg(o.booking_id), array_agg(to_jsonb(o)))
       FROM old_rows o JOIN bookings b ON b.id = o.booking_id
      WHERE NOT EXISTS (SELECT 1 FROM webhook_events ev WHERE ev.booking_id = b.id AND ev.transaction_id = txid_current())
        AND EXISTS (SELECT 1 FROM webhook_endpoints e
                     WHERE e.workspace_id = b.workspace_id AND e.removed_at IS NULL AND e.participants AND 'booking.updated' = ANY (e.event_types))
     HAVING count(*) > 0;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER bookings_record_updated AFTER UPDATE ON bookings
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION record_bookings_updated();
CREATE TRIGGER participants_record_inserted AFTER INSERT ON participants
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION record_participants_changed();
CREATE TRIGGER participants_record_updated AFTER UPDATE ON participants
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION record_participants_changed();
CREATE TRIGGER participants_record_deleted AFTER DELETE ON participants
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION record_participants_changed();

-- Replication fires row triggers only: these fire in replica role only, beside the statement
-- triggers above that serve every other role.
CREATE OR REPLACE FUNCTION record_replicated_booking_updated() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('session_replication_role') = 'replica' AND booking_changed_visibly(OLD, NEW) THEN
    PERFORM record_bookings_updated_of('bookings', ARRAY[NEW.id], ARRAY[to_jsonb(OLD)]);
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION record_replicated_participant_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('session_replication_role') <> 'replica' THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.booking_id = NEW.booking_id THEN
    IF participant_changed_visibly(OLD, NEW) THEN
      PERFORM record_bookings_updated_of('participants', ARRAY[NEW.booking_id], ARRAY[to_jsonb(OLD)]);
    END IF;
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' THEN
    PERFORM record_bookings_updated_of('participants', ARRAY[OLD.booking_id], ARRAY[to_jsonb(OLD)]);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM record_bookings_updated_of('participants', ARRAY[NEW.booking_id], ARRAY[NULL::jsonb]);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER bookings_record_updated_in_replica AFTER UPDATE ON bookings
  FOR EACH ROW EXECUTE FUNCTION record_replicated_booking_updated();
ALTER TABLE bookings ENABLE REPLICA TRIGGER bookings_record_updated_in_replica;
CREATE TRIGGER participants_record_changed_in_replica AFTER INSERT OR UPDATE OR DELETE ON participants
  FOR EACH ROW EXECUTE FUNCTION record_replicated_participant_changed();
ALTER TABLE participants ENABLE REPLICA TRIGGER participants_record_changed_in_replica;

-- At commit, the transaction's open events are closed: each gets the state at commit and its
-- deliveries (to the endpoints subscribed now; a change of the participant alone only to those
-- with participant data) and their wake-up, in this one statement; an event whose booking looks as it
-- did before the transaction is dropped. The first of them to fire closes them all, the others
-- find nothing left. It fires in every role, replica role included.
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

CREATE CONSTRAINT TRIGGER webhook_events_close_at_commit AFTER INSERT ON webhook_events
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.closing) EXECUTE FUNCTION close_booking_updated_events();
ALTER TABLE webhook_events ENABLE ALWAYS TRIGGER webhook_events_close_at_commit;
