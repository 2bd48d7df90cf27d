-- Up Migration

-- docs/architecture.md, "Webhook isolation": workers claim due deliveries themselves, a batch at a
-- time, and a claim starts an attempt only while fewer than the configured number of attempts are
-- in flight to its endpoint and to its workspace. An attempt in flight is a delivery whose lease
-- has not expired; these indexes find them, and each endpoint's pending deliveries by due time.
CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (endpoint_id, lease_until) WHERE lease_until IS NOT NULL;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE state = 'pending';

-- Down Migration
DROP INDEX webhook_deliveries_due;
DROP INDEX webhook_deliveries_in_flight;
