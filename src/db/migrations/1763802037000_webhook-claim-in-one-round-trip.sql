-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (webhook-queue.sql), which migrate applies after the pending migrations.

-- docs/architecture.md, "Webhook isolation": a claim is one call, one round trip, instead of a
-- transaction of four (BEGIN, the advisory lock, the claim, COMMIT) whose waits a busy worker
-- stretched. The function takes the lock that makes the claims of all workers take turns, then
-- claims: a volatile function's statements each take a new snapshot, so the claim sees every
-- lease the previous holder of the lock took, and the lock is held until the call's commit.
-- Each endpoint's due deliveries are ordered by due time and id: with the id in the index, an
-- endpoint's oldest are its first entries even when a burst of one transaction made them all due
-- at the same time (before, each claim read all of them to sort them).
CREATE INDEX webhook_deliveries_due_in_order ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE state = 'pending';
DROP INDEX webhook_deliveries_due;

-- Down Migration
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE state = 'pending';
DROP INDEX webhook_deliveries_due_in_order;
