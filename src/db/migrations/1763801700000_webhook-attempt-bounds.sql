-- Up Migration

-- docs/architecture.md, "Webhook isolation": a scheduled attempt starts only while fewer than the
-- configured number of attempts are in flight to its endpoint and to its workspace. An attempt in
-- flight is a delivery whose lease has not expired; these indexes find them, and the deliveries
-- whose job found no free place and waits to be woken when one frees (oldest first).
ALTER TABLE webhook_deliveries ADD COLUMN waiting_since timestamptz;
CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (endpoint_id) WHERE lease_until IS NOT NULL;
CREATE INDEX webhook_deliveries_waiting ON webhook_deliveries (endpoint_id, waiting_since) WHERE waiting_since IS NOT NULL;

-- Down Migration
DROP INDEX webhook_deliveries_waiting;
DROP INDEX webhook_deliveries_in_flight;
ALTER TABLE webhook_deliveries DROP COLUMN waiting_since;
