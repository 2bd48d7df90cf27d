-- Up Migration

-- What a named internal token may run and how much. `documents`: `any` runs every document,
-- `log` runs every document and logs those not registered for the token, `trusted` runs only
-- registered ones. `cost_per_minute`: the token's budget of cost points per minute; NULL takes
-- the service's default (INTERNAL_COST_PER_MINUTE), so that changing the default reaches every
-- token that never had its own.
ALTER TABLE internal_tokens
  ADD COLUMN documents text NOT NULL DEFAULT 'any' CHECK (documents IN ('any', 'log', 'trusted')),
  ADD COLUMN cost_per_minute integer CHECK (cost_per_minute BETWEEN 1 AND 1000000000);

-- The documents registered for a token, each under the SHA-256 (lowercase hex) of its exact text:
-- the hash a client sends as `documentId` ("sha256:<hash>") or in Apollo's persistedQuery
-- extension, and the hash of the text a client sends whole.
CREATE TABLE internal_token_documents (
  token_id text NOT NULL REFERENCES internal_tokens (id) ON DELETE CASCADE,
  hash text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
  body text NOT NULL CHECK (length(body) BETWEEN 1 AND 102400),
  -- The names of the document's operations, for people reading `documents list`.
  operation_names text[] NOT NULL DEFAULT '{}',
  added_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (token_id, hash)
);

-- Down Migration
DROP TABLE internal_token_documents;
ALTER TABLE internal_tokens DROP COLUMN cost_per_minute, DROP COLUMN documents;
