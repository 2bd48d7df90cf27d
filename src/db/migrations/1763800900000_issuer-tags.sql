-- Up Migration

-- API keys and feed tokens carry a tag only the service can compute: an HMAC-SHA256, under the
-- issuer key below, of the credential's prefix and random part. A credential without the right
-- tag was never issued, so it is refused in memory without a lookup, from any address, and a
-- valid credential never waits behind other clients' failures (docs/authentication-and-scopes.md).
--
-- The issuer key proves only "issued here", never "valid": a key is valid when its hash is found
-- active, as before. Knowing the issuer key lets one make credentials that cost a lookup each, and
-- grants nothing else; it lives here so that every instance and the operator CLI share it with no
-- configuration. 32 bytes from two random UUIDs (244 random bits).
CREATE TABLE credential_issuer_key (
  id smallint PRIMARY KEY CHECK (id = 1),
  key bytea NOT NULL CHECK (length(key) = 32),
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO credential_issuer_key (id, key)
VALUES (1, decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));

-- Credentials issued before this migration have no tag: they keep working, and the service keeps
-- the hashes of the active ones in memory (a closed set that only shrinks). `tagged` has no default,
-- so that a writer that does not know about tags (an older release's CLI) fails loudly instead of
-- issuing an untagged credential that no running instance would accept.
ALTER TABLE api_keys ADD COLUMN tagged boolean;
UPDATE api_keys SET tagged = false;
ALTER TABLE api_keys ALTER COLUMN tagged SET NOT NULL;

ALTER TABLE feed_tokens ADD COLUMN tagged boolean;
UPDATE feed_tokens SET tagged = false;
ALTER TABLE feed_tokens ALTER COLUMN tagged SET NOT NULL;

-- Down Migration
ALTER TABLE feed_tokens DROP COLUMN tagged;
ALTER TABLE api_keys DROP COLUMN tagged;
DROP TABLE credential_issuer_key;
