-- `ALTER TABLE … ENABLE TRIGGER ALL` (which `pg_restore --disable-triggers` runs after loading a
-- table) turns every trigger back into an ordinary one, firing in origin (and local) role only.
-- `restore_trigger_roles()`, which `migrate` calls on every run, gives the triggers that must fire
-- in replica role or in every role their role back; returns the triggers it changed. A disabled
-- trigger is left alone: a restore may be loading its table right now, and must not produce
-- events or pay for version bumps row by row.
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
                   ('bump_data_versions_of_replicated_workspaces', 'REPLICA'),
                   ('bump_data_versions_of_replicated_participants', 'REPLICA'),
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
