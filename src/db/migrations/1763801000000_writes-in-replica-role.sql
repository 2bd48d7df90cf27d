-- Up Migration

-- Rows written in replica role move the data version and record new bookings too.
--
-- Ordinary triggers do not fire in a session whose session_replication_role is `replica`: the
-- logical replication apply worker writes so, and anyone may set it to write without triggers.
-- The apply worker also fires row triggers only, never statement triggers: the statement
-- triggers of the data-versions and webhooks migrations would not fire for it even if they fired
-- in every role. So each table gets a row trigger that fires in replica role only (ENABLE
-- REPLICA), beside the statement triggers that serve every other writer: one of the two fires,
-- never both. TRUNCATE triggers are statement triggers, which a replicated TRUNCATE fires too:
-- they fire in every role (ENABLE ALWAYS).
--
-- `ALTER TABLE … ENABLE TRIGGER ALL` (which `pg_restore --disable-triggers` runs after loading a
-- table) turns every trigger back into an ordinary one, firing in origin (and local) role only:
-- `restore_trigger_roles()`, which `migrate` calls on every run, gives them their roles back. In
-- the meantime the row triggers would fire in origin role beside the statement triggers: their
-- functions then do nothing, so that a booking never gets two events.

-- Adds one to the slot of this transaction (as the statement triggers do) of each named workspace,
-- in workspace order, so that transactions lock the rows of several workspaces in one order.
CREATE FUNCTION bump_data_versions(VARIADIC p_workspace_ids text[]) RETURNS void
  LANGUAGE sql
  AS $$
  INSERT INTO data_versions AS d (workspace_id, slot, version)
  SELECT DISTINCT w, (txid_current() % 16)::smallint, 1 FROM unnest(p_workspace_ids) AS w WHERE w IS NOT NULL ORDER BY w
  ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
$$;

-- OLD is null for an INSERT and NEW for a DELETE: their fields read as null.
CREATE FUNCTION bump_data_versions_of_replicated_row() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('session_replication_role') = 'replica' THEN
    PERFORM bump_data_versions(OLD.workspace_id, NEW.workspace_id);
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION bump_data_versions_of_replicated_workspace() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('session_replication_role') = 'replica' THEN
    PERFORM bump_data_versions(OLD.id, NEW.id);
  END IF;
  RETURN NULL;
END
$$;

-- A participant's workspace is its booking's. A participant whose booking was deleted before it
-- finds none, but that booking's delete has moved the workspace in this transaction.
CREATE FUNCTION bump_data_versions_of_replicated_participant() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('session_replication_role') = 'replica' THEN
    PERFORM bump_data_versions(VARIADIC ARRAY(SELECT b.workspace_id FROM bookings b WHERE b.id IN (OLD.booking_id, NEW.booking_id)));
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER workspaces_data_version_in_replica AFTER INSERT OR UPDATE OR DELETE ON workspaces
  FOR EACH ROW EXECUTE FUNCTION bump_data_versions_of_replicated_workspace();
CREATE TRIGGER course_templates_data_version_in_replica AFTER INSERT OR UPDATE OR DELETE ON course_templates
  FOR EACH ROW EXECUTE FUNCTION bump_data_versions_of_replicated_row();
CREATE TRIGGER course_runs_data_version_in_replica AFTER INSERT OR UPDATE OR DELETE ON course_runs
  FOR EACH ROW EXECUTE FUNCTION bump_data_versions_of_replicated_row();
CREATE TRIGGER sessions_data_version_in_replica AFTER INSERT OR UPDATE OR DELETE ON sessions
  FOR EACH ROW EXECUTE FUNCTION bump_data_versions_of_replicated_row();
CREATE TRIGGER bookings_data_version_in_replica AFTER INSERT OR UPDATE OR DELETE ON bookings
  FOR EACH ROW EXECUTE FUNCTION bump_data_versions_of_replicated_row();
CREATE TRIGGER participants_data_version_in_replica AFTER INSERT OR UPDATE OR DELETE ON participants
  FOR EACH ROW EXECUTE FUNCTION bump_data_versions_of_replicated_participant();

ALTER TABLE workspaces ENABLE REPLICA TRIGGER workspaces_data_version_in_replica;
ALTER TABLE course_templates ENABLE REPLICA TRIGGER course_templates_data_version_in_replica;
ALTER TABLE course_runs ENABLE REPLICA TRIGGER course_runs_data_version_in_replica;
ALTER TABLE sessions ENABLE REPLICA TRIGGER sessions_data_version_in_replica;
ALTER TABLE bookings ENABLE REPLICA TRIGGER bookings_data_version_in_replica;
ALTER TABLE participants ENABLE REPLICA TRIGGER participants_data_version_in_replica;

ALTER TABLE workspaces ENABLE ALWAYS TRIGGER workspaces_data_version_truncate;
ALTER TABLE course_templates ENABLE ALWAYS TRIGGER course_templates_data_version_truncate;
ALTER TABLE course_runs ENABLE ALWAYS TRIGGER course_runs_data_version_truncate;
ALTER TABLE sessions ENABLE ALWAYS TRIGGER sessions_data_version_truncate;
ALTER TABLE bookings ENABLE ALWAYS TRIGGER bookings_data_version_truncate;
ALTER TABLE participants ENABLE ALWAYS TRIGGER participants_data_version_truncate;

-- A booking that arrives by replication is a new booking of this database: it gets its event, as
-- one inserted by any other writer does (docs/webhooks.md). The events, deliveries and jobs of
-- the given bookings, as the webhook-operations migration writes them; the statement trigger
-- passes all its new rows, the replica row trigger its one.
CREATE FUNCTION record_bookings_created_of(p_workspace_ids text[], p_booking_ids text[]) RETURNS void
  LANGUAGE plpgsql
  AS $$
DECLARE
  v_jobs integer;
BEGIN
  WITH events AS (
    INSERT INTO webhook_events (workspace_id, type, booking_id)
    SELECT workspace_id, 'booking.created', id FROM unnest(p_workspace_ids, p_booking_ids) AS new_bookings (workspace_id, id)
    RETURNING id, workspace_id
  ), deliveries AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id, state, next_attempt_at, finished_at)
    SELECT events.id, endpoints.id,
           CASE WHEN endpoints.disabled_at IS NULL THEN 'pending' ELSE 'failed' END::webhook_delivery_state,
           CASE WHEN endpoints.disabled_at IS NULL THEN now() END,
           CASE WHEN endpoints.disabled_at IS NOT NULL THEN now() END
      FROM events JOIN webhook_endpoints endpoints ON endpoints.workspace_id = events.workspace_id AND endpoints.removed_at IS NULL
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

-- Both aggregates read the rows in one pass, so the two arrays pair each booking with its workspace.
CREATE OR REPLACE FUNCTION record_bookings_created() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  PERFORM record_bookings_created_of(array_agg(workspace_id), array_agg(id)) FROM new_bookings HAVING count(*) > 0;
  RETURN NULL;
END
$$;

CREATE FUNCTION record_replicated_booking_created() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('session_replication_role') = 'replica' THEN
    PERFORM record_bookings_created_of(ARRAY[NEW.workspace_id], ARRAY[NEW.id]);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER bookings_record_created_in_replica AFTER INSERT ON bookings
  FOR EACH ROW EXECUTE FUNCTION record_replicated_booking_created();
ALTER TABLE bookings ENABLE REPLICA TRIGGER bookings_record_created_in_replica;

-- The roles above, given back to triggers that `ALTER TABLE … ENABLE TRIGGER ALL` made ordinary;
-- returns the triggers it changed. A disabled trigger is left alone: a restore may be loading its
-- table right now, and must not produce events or pay for version bumps row by row.
CREATE FUNCTION restore_trigger_roles() RETURNS SETOF text
  LANGUAGE plpgsql
  AS $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT tg.tgrelid::regclass AS tbl, tg.tgname AS name,
           CASE WHEN p.proname = 'bump_all_data_versions' THEN 'ALWAYS' ELSE 'REPLICA' END AS role
      FROM pg_trigger tg JOIN pg_proc p ON p.oid = tg.tgfoid
     WHERE NOT tg.tgisinternal AND tg.tgenabled = 'O'
       AND p.pronamespace = current_schema()::regnamespace
       AND p.proname IN ('bump_all_data_versions', 'bump_data_versions_of_replicated_row', 'bump_data_versions_of_replicated_workspace',
                         'bump_data_versions_of_replicated_participant', 'record_replicated_booking_created')
     ORDER BY 1, 2
  LOOP
    EXECUTE format('ALTER TABLE %s ENABLE %s TRIGGER %I', t.tbl, t.role, t.name);
    RETURN NEXT t.tbl || '.' || t.name;
  END LOOP;
END
$$;

-- Down Migration
DROP FUNCTION restore_trigger_roles();
DROP TRIGGER bookings_record_created_in_replica ON bookings;
DROP FUNCTION record_replicated_booking_created();
CREATE OR REPLACE FUNCTION record_bookings_created() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  v_jobs integer;
BEGIN
  WITH events AS (
    INSERT INTO webhook_events (workspace_id, type, booking_id)
    SELECT workspace_id, 'booking.created', id FROM new_bookings
    RETURNING id, workspace_id
  ), deliveries AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id, state, next_attempt_at, finished_at)
    SELECT events.id, endpoints.id,
           CASE WHEN endpoints.disabled_at IS NULL THEN 'pending' ELSE 'failed' END::webhook_delivery_state,
           CASE WHEN endpoints.disabled_at IS NULL THEN now() END,
           CASE WHEN endpoints.disabled_at IS NOT NULL THEN now() END
      FROM events JOIN webhook_endpoints endpoints ON endpoints.workspace_id = events.workspace_id AND endpoints.removed_at IS NULL
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
DROP FUNCTION record_bookings_created_of(text[], text[]);
ALTER TABLE participants ENABLE TRIGGER participants_data_version_truncate;
ALTER TABLE bookings ENABLE TRIGGER bookings_data_version_truncate;
ALTER TABLE sessions ENABLE TRIGGER sessions_data_version_truncate;
ALTER TABLE course_runs ENABLE TRIGGER course_runs_data_version_truncate;
ALTER TABLE course_templates ENABLE TRIGGER course_templates_data_version_truncate;
ALTER TABLE workspaces ENABLE TRIGGER workspaces_data_version_truncate;
DROP TRIGGER participants_data_version_in_replica ON participants;
DROP TRIGGER bookings_data_version_in_replica ON bookings;
DROP TRIGGER sessions_data_version_in_replica ON sessions;
DROP TRIGGER course_runs_data_version_in_replica ON course_runs;
DROP TRIGGER course_templates_data_version_in_replica ON course_templates;
DROP TRIGGER workspaces_data_version_in_replica ON workspaces;
DROP FUNCTION bump_data_versions_of_replicated_participant();
DROP FUNCTION bump_data_versions_of_replicated_workspace();
DROP FUNCTION bump_data_versions_of_replicated_row();
DROP FUNCTION bump_data_versions(text[]);
