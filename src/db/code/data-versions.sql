-- The data version of a workspace: it grows, in the writing transaction, with every change to a
-- table the cached answers are built from, whoever writes: the service, an import, the demo, plain SQL, the
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
--
-- Each trigger function adds one to the slot of every workspace its statement touched, in one
-- INSERT … ON CONFLICT straight from the transition tables (PL/pgSQL keeps its plans for the
-- session), in workspace order, so that statements touching several workspaces lock their rows in
-- one order. Once per statement, over all its rows (a bulk import costs one more statement per
-- table, not one per row), as the booking triggers (booking-events.sql) do.
CREATE OR REPLACE FUNCTION bump_data_versions_of_rows() RETURNS trigger
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
CREATE OR REPLACE FUNCTION bump_data_versions_of_workspaces() RETURNS trigger
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
CREATE OR REPLACE FUNCTION bump_data_versions_of_participants() RETURNS trigger
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
CREATE OR REPLACE FUNCTION bump_all_data_versions() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  UPDATE data_versions SET version = version + 1;
  RETURN NULL;
END
$$;

-- Rows written in replica role move the data version too. Ordinary triggers do not fire in a
-- session whose session_replication_role is `replica`: the logical replication apply worker writes
-- so, and anyone may set it to write without triggers. The apply worker also fires row triggers
-- only, never statement triggers. So each table gets a row trigger that fires in replica role only
-- (ENABLE REPLICA), beside the statement triggers that serve every other writer: one of the two
-- fires, never both. TRUNCATE triggers are statement triggers, which a replicated TRUNCATE fires
-- too: they fire in every role (ENABLE ALWAYS). `restore_trigger_roles()` (trigger-roles.sql)
-- gives these roles back after a restore made the triggers ordinary; in the meantime the row
-- triggers' functions do nothing outside replica role.

-- Adds one to the slot of this transaction (as the statement triggers do) of each named workspace,
-- in workspace order, so that transactions lock the rows of several workspaces in one order.
CREATE OR REPLACE FUNCTION bump_data_versions(VARIADIC p_workspace_ids text[]) RETURNS void
  LANGUAGE sql
  AS $$
  INSERT INTO data_versions AS d (workspace_id, slot, version)
  SELECT DISTINCT w, (txid_current() % 16)::smallint, 1 FROM unnest(p_workspace_ids) AS w WHERE w IS NOT NULL ORDER BY w
  ON CONFLICT (workspace_id, slot) DO UPDATE SET version = d.version + 1;
$$;

-- OLD is null for an INSERT and NEW for a DELETE: their fields read as null.
CREATE OR REPLACE FUNCTION bump_data_versions_of_replicated_row() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('session_replication_role') = 'replica' THEN
    PERFORM bump_data_versions(OLD.workspace_id, NEW.workspace_id);
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION bump_data_versions_of_replicated_workspaces() RETURNS trigger
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
CREATE OR REPLACE FUNCTION bump_data_versions_of_replicated_participants() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
BEGIN
  IF current_setting('session_replication_role') = 'replica' THEN
    PERFORM bump_data_versions(VARIADIC ARRAY(SELECT b.workspace_id FROM bookings b WHERE b.id IN (OLD.booking_id, NEW.booking_id)));
  END IF;
  RETURN NULL;
END
$$;

-- Which tables have these functions' triggers follows from what the cached operations read:
-- `npm run generate` writes them in watched-tables.generated.sql (applied after this file, the files
-- going in name order). A table that carries its workspace in `workspace_id` needs nothing here; one
-- that reaches it through another row (participants) needs its own pair of functions above, named
-- bump_data_versions_of_<table> and bump_data_versions_of_replicated_<table>; the workspaces table
-- is its own workspace.
