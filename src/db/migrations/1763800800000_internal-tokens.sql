-- Up Migration

-- Named tokens of the internal GraphQL listener: svc_int_ + 32 base62 characters + a checksum,
-- stored only as a SHA-256 hash and their last 4 characters. A token with workspaces reads only
-- those workspaces' rows; without (NULL) it reads every workspace.
CREATE TABLE internal_tokens (
  id text PRIMARY KEY DEFAULT new_id('itk'),
  name text NOT NULL CHECK (length(btrim(name)) > 0 AND length(name) <= 100),
  token_hash bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
  last4 text NOT NULL CHECK (length(last4) = 4),
  -- Ids, not references: deleting a workspace must never widen a token to every workspace.
  workspaces text[] CHECK (workspaces IS NULL OR cardinality(workspaces) > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
-- The audit trail names tokens: an active name is unique.
CREATE UNIQUE INDEX internal_tokens_active_name ON internal_tokens (name) WHERE revoked_at IS NULL;

-- Down Migration
DROP TABLE internal_tokens;
