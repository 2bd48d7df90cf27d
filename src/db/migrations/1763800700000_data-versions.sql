-- Up Migration

-- The data version of a workspace: it grows, in the writing transaction, with every change to a
-- table the public answers are built from (course_templates, course_runs, sessions, bookings,
-- participants, workspaces), whoever writes: the service, an import, the demo, plain SQL, the
-- booking trigger's transaction. An answer cached under a version is the answer for as long as a
-- fresh read of the version returns that number.
--
-- A workspace's version is the sum of its slots. A writing transaction adds one to the slot its
-- transaction id picks, so that concurrent writers of one workspace lock different rows instead of
-- queueing, each behind the commit of the one before, on a single row. Every writing transaction
-- adds at least one and nothing ever subtracts, so two different committed states of a workspace
-- never read as the same version.
--
-- Rows are never deleted (there is no foreign key to cascade): a version that started again from
-- zero would meet answers cached under the old numbers.
CREATE TABLE data_versions (
  workspace_id text NOT NULL,
  slot smallint NOT NULL CHECK (slot BETWEEN 0 AND 15),
  version bigint NOT NULL CHECK (version > 0),
  PRIMARY KEY (workspace_id, slot)
-- Room on every page for the updates of its rows, so that they stay heap-only (HOT): no index
-- entry per update.
) WITH (fillfactor = 50);

-- Every workspace has at least one slot from its first moment on (see TRUNCATE below).
INSERT INTO data_versions (workspace_id, slot, version) SELECT id, 0, 1 FROM workspaces;

-- Each trigger function adds one to the slot of every workspace its statement touched, in one
-- INSERT … ON CONFLICT straight from the transition tables (PL/pgSQL keeps its plans for the
-- session), in workspace order, so that statements touching several workspaces lock their rows in
-- one order.

-- Once per statement, over all its rows (a bulk import costs one more statement per table, not
-- one per row), as the booking trigger of the webhooks migration does.
CREATE FUNCTION bump_data_versions_of_rows() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO data_versions AS d (workspace_id, slot, version)
    SELECT DISTINCT workspace_id, (txid_current() % 16)::smallint, 1 FROM new_rows ORDER BY workspace_id
    ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO data_versions AS d (workspace_id, slot, version)
    SELECT workspace_id, (txid_current() % 16)::smallint, 1
      FROM (SELECT workspace_id FROM old_rows UNION SELECT workspace_id FROM new_rows) AS changed ORDER BY workspace_id
    ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
  ELSE
    INSERT INTO data_versions AS d (workspace_id, slot, version)
    SELECT DISTINCT workspace_id, (txid_current() % 16)::smallint, 1 FROM old_rows ORDER BY workspace_id
    ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
  END IF;
  RETURN NULL;
END
$$;

-- A workspace row is its own workspace.
CREATE FUNCTION bump_data_versions_of_workspaces() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO data_versions AS d (workspace_id, slot, version)
    SELECT id, (txid_current() % 16)::smallint, 1 FROM new_rows ORDER BY id
    ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO data_versions AS d (workspace_id, slot, version)
    SELECT id, (txid_current() % 16)::smallint, 1 FROM (SELECT id FROM old_rows UNION SELECT id FROM new_rows) AS changed ORDER BY id
    ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
  ELSE
    INSERT INTO data_versions AS d (workspace_id, slot, version)
    SELECT id, (txid_current() % 16)::smallint, 1 FROM old_rows ORDER BY id
    ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
  END IF;
  RETURN NULL;
END
$$;

-- Participants carry no workspace: it is their booking's. A participant deleted together with its
-- booking finds no booking any more, but the booking's own delete has moved the workspace.
CREATE FUNCTION bump_data_versions_of_participants() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO data_versions AS d (workspace_id, slot, version)
    SELECT DISTINCT b.workspace_id, (txid_current() % 16)::smallint, 1
      FROM new_rows p JOIN bookings b ON b.id = p.booking_id ORDER BY b.workspace_id
    ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO data_versions AS d (workspace_id, slot, version)
    SELECT workspace_id, (txid_current() % 16)::smallint, 1
      FROM (SELECT b.workspace_id FROM old_rows p JOIN bookings b ON b.id = p.booking_id
             UNION
            SELECT b.workspace_id FROM new_rows p JOIN bookings b ON b.id = p.booking_id) AS changed
     ORDER BY workspace_id
    ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
  ELSE
    INSERT INTO data_versions AS d (workspace_id, slot, version)
    SELECT DISTINCT b.workspace_id, (txid_current() % 16)::smallint, 1
      FROM old_rows p JOIN bookings b ON b.id = p.booking_id ORDER BY b.workspace_id
    ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
  END IF;
  RETURN NULL;
END
$$;

-- TRUNCATE names no rows: every workspace moves on.
CREATE FUNCTION bump_all_data_versions() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE data_versions SET version = version + 1;
  RETURN NULL;
END
$$;

-- PostgreSQL allows transition tables only on triggers of a single event: three per table.
CREATE TRIGGER workspaces_data_version_insert AFTER INSERT ON workspaces
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_workspaces();
CREATE TRIGGER workspaces_data_version_update AFTER UPDATE ON workspaces
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_workspaces();
CREATE TRIGGER workspaces_data_version_delete AFTER DELETE ON workspaces
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_workspaces();
CREATE TRIGGER workspaces_data_version_truncate AFTER TRUNCATE ON workspaces
  FOR EACH STATEMENT EXECUTE FUNCTION bump_all_data_versions();

CREATE TRIGGER course_templates_data_version_insert AFTER INSERT ON course_templates
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER course_templates_data_version_update AFTER UPDATE ON course_templates
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER course_templates_data_version_delete AFTER DELETE ON course_templates
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER course_templates_data_version_truncate AFTER TRUNCATE ON course_templates
  FOR EACH STATEMENT EXECUTE FUNCTION bump_all_data_versions();

CREATE TRIGGER course_runs_data_version_insert AFTER INSERT ON course_runs
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER course_runs_data_version_update AFTER UPDATE ON course_runs
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER course_runs_data_version_delete AFTER DELETE ON course_runs
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER course_runs_data_version_truncate AFTER TRUNCATE ON course_runs
  FOR EACH STATEMENT EXECUTE FUNCTION bump_all_data_versions();

CREATE TRIGGER sessions_data_version_insert AFTER INSERT ON sessions
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER sessions_data_version_update AFTER UPDATE ON sessions
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER sessions_data_version_delete AFTER DELETE ON sessions
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER sessions_data_version_truncate AFTER TRUNCATE ON sessions
  FOR EACH STATEMENT EXECUTE FUNCTION bump_all_data_versions();

CREATE TRIGGER bookings_data_version_insert AFTER INSERT ON bookings
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER bookings_data_version_update AFTER UPDATE ON bookings
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER bookings_data_version_delete AFTER DELETE ON bookings
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_rows();
CREATE TRIGGER bookings_data_version_truncate AFTER TRUNCATE ON bookings
  FOR EACH STATEMENT EXECUTE FUNCTION bump_all_data_versions();

CREATE TRIGGER participants_data_version_insert AFTER INSERT ON participants
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_participants();
CREATE TRIGGER participants_data_version_update AFTER UPDATE ON participants
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_participants();
CREATE TRIGGER participants_data_version_delete AFTER DELETE ON participants
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION bump_data_versions_of_participants();
CREATE TRIGGER participants_data_version_truncate AFTER TRUNCATE ON participants
  FOR EACH STATEMENT EXECUTE FUNCTION bump_all_data_versions();

-- Down Migration
DROP TRIGGER participants_data_version_truncate ON participants;
DROP TRIGGER participants_data_version_delete ON participants;
DROP TRIGGER participants_data_version_update ON participants;
DROP TRIGGER participants_data_version_insert ON participants;
DROP TRIGGER bookings_data_version_truncate ON bookings;
DROP TRIGGER bookings_data_version_delete ON bookings;
DROP TRIGGER bookings_data_version_update ON bookings;
DROP TRIGGER bookings_data_version_insert ON bookings;
DROP TRIGGER sessions_data_version_truncate ON sessions;
DROP TRIGGER sessions_data_version_delete ON sessions;
DROP TRIGGER sessions_data_version_update ON sessions;
DROP TRIGGER sessions_data_version_insert ON sessions;
DROP TRIGGER course_runs_data_version_truncate ON course_runs;
DROP TRIGGER course_runs_data_version_delete ON course_runs;
DROP TRIGGER course_runs_data_version_update ON course_runs;
DROP TRIGGER course_runs_data_version_insert ON course_runs;
DROP TRIGGER course_templates_data_version_truncate ON course_templates;
DROP TRIGGER course_templates_data_version_delete ON course_templates;
DROP TRIGGER course_templates_data_version_update ON course_templates;
DROP TRIGGER course_templates_data_version_insert ON course_templates;
DROP TRIGGER workspaces_data_version_truncate ON workspaces;
DROP TRIGGER workspaces_data_version_delete ON workspaces;
DROP TRIGGER workspaces_data_version_update ON workspaces;
DROP TRIGGER workspaces_data_version_insert ON workspaces;
DROP FUNCTION bump_all_data_versions();
DROP FUNCTION bump_data_versions_of_participants();
DROP FUNCTION bump_data_versions_of_workspaces();
DROP FUNCTION bump_data_versions_of_rows();
DROP TABLE data_versions;
