-- The public course list (docs/contract-rules.md, resources.course-listing and
-- resources.course-order), stated once: a run is listed while it is published and has a scheduled
-- session, at the start of its earliest one. Every other part of the service reads
-- course_runs.listed_from, which these keep.

CREATE OR REPLACE FUNCTION course_run_listed_from(r course_runs) RETURNS timestamptz
  LANGUAGE sql STABLE
  AS $$
  SELECT CASE WHEN r.status = 'published'
    THEN (SELECT min(s.starts_at) FROM sessions s WHERE s.course_run_id = r.id AND s.status = 'scheduled')
  END
$$;

-- Whoever writes a run (a status change, a restore, a hand-written value) gets the rule's value.
CREATE OR REPLACE FUNCTION set_course_run_listed_from() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  NEW.listed_from := course_run_listed_from(NEW);
  RETURN NEW;
END
$$;

-- Every change to a run's sessions rewrites the run's row, so that the row's xmin (the transaction
-- that wrote it as it is now) changes with anything /courses and the calendar feed show of the
-- run but its template: the answer cache reads a run's version from its own row and its
-- template's (src/answer-cache/piece-version-store.ts). The runs whose sessions changed are locked
-- in id order (concurrent writers lock them in one order); FOR NO KEY UPDATE, as the update
-- itself, so that writers of bookings and sessions, whose foreign keys share the runs' rows (FOR
-- KEY SHARE), never wait for it.
CREATE OR REPLACE FUNCTION refresh_course_run_listings(p_run_ids text[]) RETURNS void
  LANGUAGE sql
  AS $$
  UPDATE course_runs r SET listed_from = course_run_listed_from(r)
    FROM (SELECT c.id FROM course_runs c WHERE c.id = ANY(p_run_ids) ORDER BY c.id FOR NO KEY UPDATE) AS locked
   WHERE r.id = locked.id;
$$;

-- Once per statement, over all its rows (an import of 100,000 sessions is one more statement).
CREATE OR REPLACE FUNCTION refresh_listings_of_session_rows() RETURNS trigger
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

CREATE OR REPLACE FUNCTION refresh_listings_after_truncate() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE course_runs r SET listed_from = NULL WHERE r.listed_from IS NOT NULL;
  RETURN NULL;
END
$$;

-- Logical replication applies rows with row triggers only (docs/architecture.md).
CREATE OR REPLACE FUNCTION refresh_listing_of_replicated_session() RETURNS trigger
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
