-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (revisions.sql), which migrate applies after the pending migrations.

-- Calendar feed tokens: svc_cal_ + 32 base62 characters, stored only as a SHA-256 hash.
CREATE TABLE feed_tokens (
  id text PRIMARY KEY DEFAULT new_id('feed'),
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) > 0),
  token_hash bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
  last4 text NOT NULL CHECK (length(last4) = 4),
  created_by text NOT NULL REFERENCES members (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX feed_tokens_workspace ON feed_tokens (workspace_id, created_at);

-- Subscribed calendars pick up an edit only when SEQUENCE and LAST-MODIFIED move: every change
-- to what an event shows bumps the row's revision and its updated_at.
ALTER TABLE sessions ADD COLUMN revision integer NOT NULL DEFAULT 0;
ALTER TABLE course_templates ADD COLUMN revision integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE course_templates DROP COLUMN revision;
ALTER TABLE sessions DROP COLUMN revision;
DROP TABLE feed_tokens;
