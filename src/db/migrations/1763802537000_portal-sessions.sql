-- Up Migration

-- The integrations page's sessions (docs/integrations-area.md). A link is made for an owner or
-- admin of a workspace and opens once, within minutes; opening it starts a session of the given
-- life. Only the SHA-256 of the link's secret and of the session's token are kept. A session lasts
-- while its member is an owner or admin (checked on each request, by joining members) and until
-- its workspace's sessions are revoked (`admin -- portal revoke`).
CREATE TABLE portal_sessions (
  id text PRIMARY KEY DEFAULT new_id('pss'),
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  member_id text NOT NULL REFERENCES members(id) ON DELETE CASCADE,
  read_only boolean NOT NULL DEFAULT false,
  ttl_seconds integer NOT NULL CHECK (ttl_seconds BETWEEN 60 AND 86400),
  link_hash bytea NOT NULL UNIQUE CHECK (length(link_hash) = 32),
  link_expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  opened_at timestamptz,
  token_hash bytea UNIQUE CHECK (length(token_hash) = 32),
  expires_at timestamptz,
  revoked_at timestamptz,
  CHECK ((opened_at IS NULL) = (token_hash IS NULL) AND (token_hash IS NULL) = (expires_at IS NULL))
);
COMMENT ON TABLE portal_sessions IS 'A link to the integrations page and the session it opened: hashes only, never the secrets.';
CREATE INDEX portal_sessions_by_workspace ON portal_sessions (workspace_id) WHERE revoked_at IS NULL;

-- Down Migration
DROP TABLE portal_sessions;
