-- What the tables' own rules call: column DEFAULTs (`new_id`) and a CHECK (`is_iana_time_zone`).
-- The first migration defines them too, as they were then: its tables need them before this file
-- runs on a fresh database. This file's definitions are the current ones.

-- Opaque ids: a short type prefix and 128 random bits, never a sequence number.
CREATE OR REPLACE FUNCTION new_id(prefix text) RETURNS text
  LANGUAGE sql VOLATILE
  AS $$ SELECT prefix || '_' || replace(gen_random_uuid()::text, '-', '') $$;

-- An IANA zone name (Area/City shape, or UTC) that this server's time zone database knows.
CREATE OR REPLACE FUNCTION is_iana_time_zone(zone text) RETURNS boolean
  LANGUAGE plpgsql STABLE
  AS $$
BEGIN
  IF zone !~ '^(UTC|[A-Za-z]+(/[A-Za-z0-9_+-]+)+)$' THEN
    RETURN false;
  END IF;
  PERFORM now() AT TIME ZONE zone;
  RETURN true;
EXCEPTION WHEN invalid_parameter_value THEN
  RETURN false;
END
$$;
