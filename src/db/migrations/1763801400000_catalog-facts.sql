-- Up Migration

-- What the internal GraphQL schema, the resource registry and the fixture import read from the
-- catalog: relations from foreign keys, descriptions and messages from comments, and the public
-- course list as a stored, indexed column.

-- A session and a booking belong to their workspace: the relations Workspace.sessions and
-- Workspace.bookings come from these keys. (Their runs' keys name the workspace too, so no row
-- changes.)
ALTER TABLE sessions ADD CONSTRAINT sessions_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id);
ALTER TABLE bookings ADD CONSTRAINT bookings_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES workspaces (id);

-- The public course list (docs/contract-rules.md, resources.course-listing and
-- resources.course-order), stated once: a run is listed while it is published and has a scheduled
-- session, at the start of its earliest one. Every other part of the service reads the column.
ALTER TABLE course_runs ADD COLUMN listed_from timestamptz;

CREATE FUNCTION course_run_listed_from(r course_runs) RETURNS timestamptz
  LANGUAGE sql STABLE
  AS $$
  SELECT CASE WHEN r.status = 'published'
    THEN (SELECT min(s.starts_at) FROM sessions s WHERE s.course_run_id = r.id AND s.status = 'scheduled')
  END
$$;

-- Whoever writes a run (a status change, a restore, a hand-written value) gets the rule's value.
CREATE FUNCTION set_course_run_listed_from() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  NEW.listed_from := course_run_listed_from(NEW);
  RETURN NEW;
END
$$;

-- The runs whose sessions changed and whose listing moves, locked in id order (concurrent writers
-- lock them in one order); FOR NO KEY UPDATE, as the update itself, so that writers of bookings and
-- sessions, whose foreign keys share the runs' rows (FOR KEY SHARE), never wait for it.
CREATE FUNCTION refresh_course_run_listings(p_run_ids text[]) RETURNS void
  LANGUAGE sql
  AS $$
  UPDATE course_runs r SET listed_from = course_run_listed_from(r)
    FROM (SELECT c.id FROM course_runs c
           WHERE c.id = ANY(p_run_ids) AND c.listed_from IS DISTINCT FROM course_run_listed_from(c)
           ORDER BY c.id FOR NO KEY UPDATE) AS locked
   WHERE r.id = locked.id;
$$;

-- Once per statement, over all its rows (an import of 100,000 sessions is one more statement).
CREATE FUNCTION refresh_listings_of_session_rows() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM refresh_course_run_listings(ARRAY(SELECT DISTINCT course_run_id FROM new_rows));
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM refresh_course_run_listings(ARRAY(SELECT course_run_id FROM old_rows UNION SELECT course_run_id FROM new_rows));
  ELSE
    PERFORM refresh_course_run_listings(ARRAY(SELECT DISTINCT course_run_id FROM old_rows));
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION refresh_listings_after_truncate() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE course_runs r SET listed_from = NULL WHERE r.listed_from IS NOT NULL;
  RETURN NULL;
END
$$;

-- Logical replication applies rows with row triggers only (docs/architecture.md).
CREATE FUNCTION refresh_listing_of_replicated_session() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('session_replication_role') = 'replica' THEN
    PERFORM refresh_course_run_listings(ARRAY[OLD.course_run_id, NEW.course_run_id]);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER course_runs_listed_from BEFORE INSERT OR UPDATE ON course_runs
  FOR EACH ROW EXECUTE FUNCTION set_course_run_listed_from();
CREATE TRIGGER sessions_listing_insert AFTER INSERT ON sessions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION refresh_listings_of_session_rows();
CREATE TRIGGER sessions_listing_update AFTER UPDATE ON sessions
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION refresh_listings_of_session_rows();
CREATE TRIGGER sessions_listing_delete AFTER DELETE ON sessions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION refresh_listings_of_session_rows();
CREATE TRIGGER sessions_listing_truncate AFTER TRUNCATE ON sessions
  FOR EACH STATEMENT EXECUTE FUNCTION refresh_listings_after_truncate();
CREATE TRIGGER sessions_listing_in_replica AFTER INSERT OR UPDATE OR DELETE ON sessions
  FOR EACH ROW EXECUTE FUNCTION refresh_listing_of_replicated_session();
ALTER TABLE course_runs ENABLE ALWAYS TRIGGER course_runs_listed_from;
ALTER TABLE sessions ENABLE ALWAYS TRIGGER sessions_listing_truncate;
ALTER TABLE sessions ENABLE REPLICA TRIGGER sessions_listing_in_replica;

UPDATE course_runs SET listed_from = listed_from;

-- The course list of a workspace in its order, from the first row to the last.
CREATE INDEX course_runs_listed ON course_runs (workspace_id, listed_from, id) WHERE listed_from IS NOT NULL;

-- The data-version triggers of a table whose rows carry their workspace in `workspace_id`, as the
-- data-versions and replica-role migrations give them to the tables of the public answers: one
-- statement trigger per event, TRUNCATE in every role, a row trigger in replica role only.
CREATE FUNCTION track_data_versions(p_table regclass) RETURNS void
  LANGUAGE plpgsql
  AS $$
DECLARE
  name text := (SELECT relname FROM pg_class WHERE oid = p_table);
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = p_table AND attname = 'workspace_id' AND attnum > 0 AND NOT attisdropped) THEN
    RAISE EXCEPTION 'track_data_versions(%): the table has no workspace_id column', p_table;
  END IF;
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows()', name || '_data_version_insert', p_table);
  EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows()', name || '_data_version_update', p_table);
  EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %s REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows()', name || '_data_version_delete', p_table);
  EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION bump_all_data_versions()', name || '_data_version_truncate', p_table);
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION bump_data_versions_of_replicated_row()', name || '_data_version_in_replica', p_table);
  EXECUTE format('ALTER TABLE %s ENABLE REPLICA TRIGGER %I', p_table, name || '_data_version_in_replica');
  EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER %I', p_table, name || '_data_version_truncate');
END
$$;

-- The roles of the triggers above join those `restore_trigger_roles()` gives back after a restore.
CREATE OR REPLACE FUNCTION restore_trigger_roles() RETURNS SETOF text
  LANGUAGE plpgsql
  AS $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT tg.tgrelid::regclass AS tbl, tg.tgname AS name, roles.role
      FROM pg_trigger tg
      JOIN pg_proc p ON p.oid = tg.tgfoid
      JOIN (VALUES ('bump_all_data_versions', 'ALWAYS'),
                   ('close_booking_updated_events', 'ALWAYS'),
                   ('set_course_run_listed_from', 'ALWAYS'),
                   ('refresh_listings_after_truncate', 'ALWAYS'),
                   ('bump_data_versions_of_replicated_row', 'REPLICA'),
                   ('bump_data_versions_of_replicated_workspace', 'REPLICA'),
                   ('bump_data_versions_of_replicated_participant', 'REPLICA'),
                   ('record_replicated_booking_created', 'REPLICA'),
                   ('record_replicated_booking_updated', 'REPLICA'),
                   ('record_replicated_participant_changed', 'REPLICA'),
                   ('refresh_listing_of_replicated_session', 'REPLICA')) AS roles (function, role) ON roles.function = p.proname
     WHERE NOT tg.tgisinternal AND tg.tgenabled = 'O'
       AND p.pronamespace = current_schema()::regnamespace
     ORDER BY 1, 2
  LOOP
    EXECUTE format('ALTER TABLE %s ENABLE %s TRIGGER %I', t.tbl, t.role, t.name);
    RETURN NEXT t.tbl || '.' || t.name;
  END LOOP;
END
$$;

-- Descriptions: the internal GraphQL schema's, from here.
COMMENT ON TABLE workspaces IS 'A customer account: its members, courses and bookings.';
COMMENT ON TABLE course_templates IS 'What a course is about; runs of it are scheduled.';
COMMENT ON TABLE course_runs IS 'One run of a course template, with its sessions.';
COMMENT ON TABLE sessions IS 'One meeting of a course run.';
COMMENT ON TABLE bookings IS 'A place booked on a course run.';
COMMENT ON TABLE participants IS 'The person a booking is for (personal data).';
COMMENT ON COLUMN course_runs.listed_from IS 'The start of the run''s earliest scheduled session while the run is published: the public course list shows such runs in this order (ties by id). Null while the run is not listed.';
COMMENT ON COLUMN course_templates.revision IS 'Grows by one with every change.';
COMMENT ON COLUMN sessions.revision IS 'Grows by one with every change.';
COMMENT ON COLUMN sessions.time_zone IS 'IANA time zone name, e.g. Europe/Berlin.';
COMMENT ON COLUMN sessions.location IS 'Where the session takes place.';
COMMENT ON COLUMN sessions.duration_minutes IS 'How long the session lasts, in minutes.';
COMMENT ON COLUMN bookings.source IS 'Where the booking was made.';

-- Messages: what the fixture import says of a value a rule refuses, after the field and its value.
COMMENT ON CONSTRAINT workspaces_name_check ON workspaces IS 'must not be empty';
COMMENT ON CONSTRAINT members_name_check ON members IS 'must not be empty';
COMMENT ON CONSTRAINT members_email_check ON members IS 'is not an e-mail address';
COMMENT ON INDEX members_workspace_email IS 'a member with this e-mail already exists in the workspace';
COMMENT ON CONSTRAINT course_templates_title_check ON course_templates IS 'must not be empty';
COMMENT ON CONSTRAINT sessions_duration_minutes_check ON sessions IS 'must be positive';
COMMENT ON CONSTRAINT sessions_time_zone_check ON sessions IS 'is not a known IANA time zone';
COMMENT ON CONSTRAINT bookings_check ON bookings IS 'updatedAt is before createdAt';
COMMENT ON CONSTRAINT participants_name_check ON participants IS 'must not be empty';
COMMENT ON CONSTRAINT participants_email_check ON participants IS 'is not an e-mail address';

-- Down Migration
DROP FUNCTION track_data_versions(regclass);
DROP INDEX course_runs_listed;
DROP TRIGGER sessions_listing_in_replica ON sessions;
DROP TRIGGER sessions_listing_truncate ON sessions;
DROP TRIGGER sessions_listing_delete ON sessions;
DROP TRIGGER sessions_listing_update ON sessions;
DROP TRIGGER sessions_listing_insert ON sessions;
DROP TRIGGER course_runs_listed_from ON course_runs;
DROP FUNCTION refresh_listing_of_replicated_session();
DROP FUNCTION refresh_listings_after_truncate();
DROP FUNCTION refresh_listings_of_session_rows();
DROP FUNCTION refresh_course_run_listings(text[]);
DROP FUNCTION set_course_run_listed_from();
DROP FUNCTION course_run_listed_from(course_runs);
ALTER TABLE course_runs DROP COLUMN listed_from;
ALTER TABLE bookings DROP CONSTRAINT bookings_workspace_id_fkey;
ALTER TABLE sessions DROP CONSTRAINT sessions_workspace_id_fkey;
