-- Up Migration

-- docs/architecture.md, "Webhook isolation": the deliveries table is the one queue of webhook
-- deliveries. graphile-worker ran beside it only to wake the dispatchers (a job per retry, per
-- `webhook enable` and per `webhook recover`) and is gone: a worker is woken by
-- `NOTIFY webhook_deliveries_due` when something becomes due now, and by one timer armed from the
-- next due time it reads from the deliveries themselves.

-- The recording of scheduled attempts no longer adds a job for each retry, and loses its task
-- parameter: record_scheduled_webhook_attempts in src/db/code/webhook-queue.sql, as it is now (the
-- code step drops the old signature with every function the files no longer define).

-- graphile-worker's own schema, which `migrate` installed for the wake-up jobs: its jobs only said
-- "look", and every delivery they named is still in webhook_deliveries.
DROP SCHEMA IF EXISTS graphile_worker CASCADE;

-- Down Migration
-- The release before this one installs graphile-worker's schema at its own `migrate`, and its code
-- (src/db/code of that release) defines the recording with the job of each retry.
