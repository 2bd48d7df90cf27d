-- Up Migration

-- Opaque ids: a short type prefix and 128 random bits, never a sequence number.
CREATE FUNCTION new_id(prefix text) RETURNS text
  LANGUAGE sql VOLATILE
  AS $$ SELECT prefix || '_' || replace(gen_random_uuid()::text, '-', '') $$;

-- An IANA zone name (Area/City shape, or UTC) that this server's time zone database knows.
CREATE FUNCTION is_iana_time_zone(zone text) RETURNS boolean
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

CREATE TYPE member_role AS ENUM ('owner', 'admin', 'member');
CREATE TYPE course_run_status AS ENUM ('draft', 'published', 'unpublished');
CREATE TYPE session_status AS ENUM ('scheduled', 'cancelled');
CREATE TYPE booking_source AS ENUM ('admin', 'public_page', 'widget', 'api');
CREATE TYPE booking_status AS ENUM ('pending', 'confirmed', 'waitlisted', 'cancelled', 'expired');

CREATE TABLE workspaces (
  id text PRIMARY KEY DEFAULT new_id('ws'),
  name text NOT NULL CHECK (length(btrim(name)) > 0),
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE members (
  id text PRIMARY KEY DEFAULT new_id('mem'),
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  email text NOT NULL CHECK (email ~ '^[^@\s]+@[^@\s]+$'),
  name text NOT NULL CHECK (length(btrim(name)) > 0),
  role member_role NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX members_workspace_email ON members (workspace_id, lower(email));

CREATE TABLE course_templates (
  id text PRIMARY KEY DEFAULT new_id('tpl'),
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  title text NOT NULL CHECK (length(btrim(title)) > 0),
  description text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, id)
);

CREATE TABLE course_runs (
  id text PRIMARY KEY DEFAULT new_id('run'),
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  template_id text NOT NULL,
  status course_run_status NOT NULL DEFAULT 'draft',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, id),
  -- A run uses a template of its own workspace.
  FOREIGN KEY (workspace_id, template_id) REFERENCES course_templates (workspace_id, id)
);
-- /courses: the published runs of one workspace.
CREATE INDEX course_runs_workspace_status ON course_runs (workspace_id, status, id);
CREATE INDEX course_runs_template ON course_runs (template_id);

CREATE TABLE sessions (
  id text PRIMARY KEY DEFAULT new_id('ses'),
  workspace_id text NOT NULL,
  course_run_id text NOT NULL,
  starts_at timestamptz NOT NULL,
  duration_minutes integer NOT NULL CHECK (duration_minutes > 0),
  time_zone text NOT NULL CHECK (is_iana_time_zone(time_zone)),
  location text NOT NULL DEFAULT '',
  status session_status NOT NULL DEFAULT 'scheduled',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (workspace_id, course_run_id) REFERENCES course_runs (workspace_id, id) ON DELETE CASCADE
);
-- Sessions of a run in contract order (startsAt, then id), and the earliest scheduled one.
CREATE INDEX sessions_run_start ON sessions (course_run_id, starts_at, id);
CREATE INDEX sessions_run_scheduled_start ON sessions (course_run_id, starts_at, id) WHERE status = 'scheduled';

CREATE TABLE bookings (
  id text PRIMARY KEY DEFAULT new_id('bkg'),
  workspace_id text NOT NULL,
  course_run_id text NOT NULL,
  source booking_source NOT NULL,
  status booking_status NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (updated_at >= created_at),
  -- A booking and its course run belong to the same workspace.
  FOREIGN KEY (workspace_id, course_run_id) REFERENCES course_runs (workspace_id, id)
);
-- /bookings: newest first, ties by id descending, per workspace.
CREATE INDEX bookings_workspace_created ON bookings (workspace_id, created_at DESC, id DESC);
CREATE INDEX bookings_course_run ON bookings (course_run_id);

-- Personal data lives apart, so that it is read only when a caller asks for it.
CREATE TABLE participants (
  booking_id text PRIMARY KEY REFERENCES bookings (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) > 0),
  email text NOT NULL CHECK (email ~ '^[^@\s]+@[^@\s]+$')
);

-- Down Migration
DROP TABLE participants;
DROP TABLE bookings;
DROP TABLE sessions;
DROP TABLE course_runs;
DROP TABLE course_templates;
DROP TABLE members;
DROP TABLE workspaces;
DROP TYPE booking_status;
DROP TYPE booking_source;
DROP TYPE session_status;
DROP TYPE course_run_status;
DROP TYPE member_role;
DROP FUNCTION is_iana_time_zone(text);
DROP FUNCTION new_id(text);
