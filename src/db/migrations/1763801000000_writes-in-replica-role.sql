-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (booking-events.sql, data-versions.sql, trigger-roles.sql), which migrate applies after the pending migrations.

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

-- Down Migration
