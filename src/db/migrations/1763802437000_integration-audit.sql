-- Up Migration

-- What was done to a workspace's integrations (keys, webhook endpoints, calendar feeds), by whom
-- and through which way in (docs/internal-graphql.md, Integrations). The member's e-mail is the
-- one they were named by when they acted: a member removed later stays named. Null only for a
-- change made at the operator CLI without --member (the operator's own).
CREATE TABLE integration_audit (
  id text PRIMARY KEY DEFAULT new_id('aud'),
  workspace_id text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  member_email text CHECK (length(member_email) <= 320),
  operation text NOT NULL CHECK (operation ~ '^[a-z]+\.[a-z-]+$'),
  target_id text CHECK (length(target_id) <= 100),
  source text NOT NULL CHECK (source IN ('cli', 'graphql', 'page')),
  at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE integration_audit IS 'One change to a workspace''s keys, webhook endpoints or calendar feeds: who, what, on which, when and through which way in.';
CREATE INDEX integration_audit_by_workspace ON integration_audit (workspace_id, at, id);

-- Whether a named internal token may manage integrations on behalf of a workspace's owners and
-- admins (the integrations grant); no token held it before, and new ones do not.
ALTER TABLE internal_tokens ADD COLUMN integrations boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE internal_tokens DROP COLUMN integrations;
DROP TABLE integration_audit;
