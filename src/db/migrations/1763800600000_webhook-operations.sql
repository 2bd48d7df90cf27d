-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (booking-events.sql), which migrate applies after the pending migrations.

-- Secret rotation keeps the previous secret until its overlap ends; every attempt until then is
-- signed with both. An endpoint whose deliveries keep failing is disabled until an operator
-- enables it again. Sealed secrets written from now on carry the id of the key that sealed them
-- and are bound to their endpoint; those sealed before stay readable (`webhook reseal` upgrades them).
ALTER TABLE webhook_endpoints
  ADD COLUMN previous_secret_ciphertext bytea CHECK (length(previous_secret_ciphertext) > 28),
  ADD COLUMN previous_secret_expires_at timestamptz,
  ADD COLUMN disabled_at timestamptz,
  ADD CONSTRAINT webhook_endpoints_previous_secret CHECK ((previous_secret_ciphertext IS NULL) = (previous_secret_expires_at IS NULL));

-- `webhook recover` starts a new series of up to 8 attempts for a failed delivery; attempts are
-- numbered within their series. `finished_at` is when the delivery reached its final state: the
-- stored body (personal data for endpoints with participants) is erased a retention time later.
ALTER TABLE webhook_deliveries
  ADD COLUMN series integer NOT NULL DEFAULT 1 CHECK (series >= 1),
  ADD COLUMN finished_at timestamptz,
  ADD COLUMN body_erased_at timestamptz;
UPDATE webhook_deliveries SET finished_at = updated_at WHERE state <> 'pending';
CREATE INDEX webhook_deliveries_body_retention ON webhook_deliveries (finished_at) WHERE body IS NOT NULL;
CREATE INDEX webhook_deliveries_endpoint_state ON webhook_deliveries (endpoint_id, state);
ALTER TABLE webhook_attempts ADD COLUMN series integer NOT NULL DEFAULT 1 CHECK (series >= 1);

-- Down Migration
ALTER TABLE webhook_attempts DROP COLUMN series;
DROP INDEX webhook_deliveries_endpoint_state;
DROP INDEX webhook_deliveries_body_retention;
ALTER TABLE webhook_deliveries DROP COLUMN body_erased_at, DROP COLUMN finished_at, DROP COLUMN series;
ALTER TABLE webhook_endpoints
  DROP CONSTRAINT webhook_endpoints_previous_secret,
  DROP COLUMN disabled_at,
  DROP COLUMN previous_secret_expires_at,
  DROP COLUMN previous_secret_ciphertext;
