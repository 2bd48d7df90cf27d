-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (data-versions.sql, listings.sql, trigger-roles.sql), which migrate applies after the pending migrations.

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

-- The runs that exist take the rule's value; from here on the triggers of src/db/code/listings.sql
-- keep it (they are applied after the migrations, so this data move cannot count on them).
UPDATE course_runs r SET listed_from = CASE WHEN r.status = 'published'
  THEN (SELECT min(s.starts_at) FROM sessions s WHERE s.course_run_id = r.id AND s.status = 'scheduled')
END;

-- The course list of a workspace in its order, from the first row to the last.
CREATE INDEX course_runs_listed ON course_runs (workspace_id, listed_from, id) WHERE listed_from IS NOT NULL;

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
DROP INDEX course_runs_listed;
ALTER TABLE course_runs DROP COLUMN listed_from;
ALTER TABLE bookings DROP CONSTRAINT bookings_workspace_id_fkey;
ALTER TABLE sessions DROP CONSTRAINT sessions_workspace_id_fkey;
