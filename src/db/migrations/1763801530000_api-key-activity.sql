-- Up Migration

-- What an integrator and an operator learn of a key's life: when it expires, where it may be used
-- from, when and from which network it was last used, and a log of its recent requests
-- (docs/authentication-and-scopes.md). A key created without the new options behaves as before.

COMMENT ON TABLE api_keys IS 'An API key of the public REST API. Only its hash is stored; neither the key nor its hash is ever served.';
COMMENT ON COLUMN api_keys.name IS 'What the workspace calls the key.';
COMMENT ON COLUMN api_keys.last_used_at IS 'When the key was last used, exact to about a minute: written at most once per key and minute, across instances.';
COMMENT ON COLUMN api_keys.revoked_at IS 'When the key was revoked or rotated; null while it is neither.';
COMMENT ON COLUMN api_keys.replaced_by IS 'The key that replaced this one when it was rotated.';
COMMENT ON COLUMN api_keys.tagged IS 'False for a key issued before issuer tags: it works, and rotating it issues a tagged key.';

-- An expired key is refused exactly as a revoked one. Rotation keeps the policy: the new key
-- expires as long after its creation as the old one did after its own.
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz,
  ADD CONSTRAINT api_keys_expires_after_creation CHECK (expires_at > created_at);
COMMENT ON COLUMN api_keys.expires_at IS 'When the key stops working, as if revoked; null for a key that does not expire.';

-- The networks a key may be used from; null for anywhere.
ALTER TABLE api_keys ADD COLUMN allowed_ips cidr[] CHECK (cardinality(allowed_ips) BETWEEN 1 AND 100);

-- The client address of the last use, truncated to its /24 (IPv4) or /48 (IPv6): where a key is
-- used, without the address of a person.
ALTER TABLE api_keys ADD COLUMN last_used_network text CHECK (length(last_used_network) <= 64);
COMMENT ON COLUMN api_keys.last_used_network IS 'The network of the client at the last use: its address truncated to /24 (IPv4) or /48 (IPv6).';

-- When the warning that a used key expires soon was last written, so that one instance writes it once a day.
ALTER TABLE api_keys ADD COLUMN expiry_warned_at timestamptz;
CREATE INDEX api_keys_expiring ON api_keys (expires_at) WHERE expires_at IS NOT NULL AND revoked_at IS NULL;

-- A key's recent requests, newest first: a ring of KEY_REQUEST_LOG_MAX_ROWS rows per key, in
-- which a new row takes the slot of the oldest. Written in batches, off the request path. No
-- secret, no key material and no personal data: the path without its query, the client's
-- network, never its address.
CREATE TABLE api_key_requests (
  id text PRIMARY KEY DEFAULT new_id('req'),
  api_key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  slot integer NOT NULL CHECK (slot >= 0),
  requested_at timestamptz NOT NULL,
  method text NOT NULL CHECK (length(method) BETWEEN 1 AND 16),
  path text NOT NULL CHECK (length(path) <= 1024),
  status integer NOT NULL CHECK (status BETWEEN 100 AND 599),
  error_code text CHECK (length(error_code) <= 64),
  duration_ms double precision NOT NULL CHECK (duration_ms >= 0),
  request_id text NOT NULL CHECK (length(request_id) BETWEEN 1 AND 128),
  client_network text CHECK (length(client_network) <= 64),
  cache text CHECK (cache IN ('hit', 'miss', 'shared', 'bypass', 'off')),
  UNIQUE (api_key_id, slot)
);
COMMENT ON TABLE api_key_requests IS 'A request made with an API key, as its request log keeps it.';
COMMENT ON COLUMN api_key_requests.requested_at IS 'When the request arrived.';
COMMENT ON COLUMN api_key_requests.method IS 'GET or HEAD.';
COMMENT ON COLUMN api_key_requests.path IS 'The path requested, without its query string.';
COMMENT ON COLUMN api_key_requests.status IS 'The HTTP status of the answer.';
COMMENT ON COLUMN api_key_requests.error_code IS 'The error.code of the answer; null for a success.';
COMMENT ON COLUMN api_key_requests.duration_ms IS 'Milliseconds from the request''s arrival to its answer.';
COMMENT ON COLUMN api_key_requests.request_id IS 'The X-Request-Id the answer carried.';
COMMENT ON COLUMN api_key_requests.client_network IS 'The client''s address truncated to /24 (IPv4) or /48 (IPv6).';
COMMENT ON COLUMN api_key_requests.cache IS 'How the response cache answered: hit, miss, shared, bypass or off; null where no answer was built.';
CREATE INDEX api_key_requests_newest ON api_key_requests (api_key_id, requested_at, id);
CREATE INDEX api_key_requests_retention ON api_key_requests (requested_at);

-- How many rows each key's log has taken: the next row's slot is this count modulo the ring's size.
CREATE TABLE api_key_request_counts (
  api_key_id text PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  logged bigint NOT NULL CHECK (logged >= 0)
);

-- Requests per key and day (UTC), by status class, every request counted whether or not its row
-- was kept in the log.
CREATE TABLE api_key_usage (
  api_key_id text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  day date NOT NULL,
  status_2xx bigint NOT NULL DEFAULT 0,
  status_3xx bigint NOT NULL DEFAULT 0,
  status_4xx bigint NOT NULL DEFAULT 0,
  status_5xx bigint NOT NULL DEFAULT 0,
  -- 429s, counted in status_4xx too.
  rate_limited bigint NOT NULL DEFAULT 0,
  -- Requests counted here whose row the log did not keep (beyond KEY_REQUEST_LOG_ROWS_PER_SECOND).
  not_logged bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (api_key_id, day)
);
CREATE INDEX api_key_usage_day ON api_key_usage (day);

-- Down Migration
DROP TABLE api_key_usage;
DROP TABLE api_key_request_counts;
DROP TABLE api_key_requests;
DROP INDEX api_keys_expiring;
ALTER TABLE api_keys DROP COLUMN expiry_warned_at, DROP COLUMN last_used_network, DROP COLUMN allowed_ips, DROP COLUMN expires_at;
COMMENT ON TABLE api_keys IS NULL;
