-- Up Migration

CREATE TABLE api_keys (
  id text PRIMARY KEY DEFAULT new_id('key'),
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(btrim(name)) > 0),
  scopes text[] NOT NULL CHECK (
    cardinality(scopes) > 0
    AND scopes <@ ARRAY['courses:read', 'bookings:read', 'participants:read']
    -- participants:read cannot be granted without bookings:read (docs/contract-rules.md, auth.scope-dependency).
    AND (NOT 'participants:read' = ANY (scopes) OR 'bookings:read' = ANY (scopes))
  ),
  -- Only a SHA-256 hash and the last 4 characters are kept; the key itself is shown once.
  key_hash bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  last4 text NOT NULL CHECK (length(last4) = 4),
  created_by text NOT NULL REFERENCES members (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  -- Set when the key was rotated: the key that replaced it.
  replaced_by text REFERENCES api_keys (id)
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id, created_at);

-- Down Migration
DROP TABLE api_keys;
