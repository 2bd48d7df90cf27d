-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (webhook-queue.sql), which migrate applies after the pending migrations.

-- docs/architecture.md, "Webhook isolation": a claim as the worker's profile measured it. Under a
-- burst, a claim of about 40 deliveries took 40 ms of the database, one claim at a time, which
-- capped the worker near 1,000 deliveries/s. Its plan, made on statistics from before the burst,
-- leased the chosen rows by walking every open endpoint's pending deliveries and testing each
-- against the array of chosen ids (100 endpoints x 100 deliveries x the array). Now the chosen
-- ids are a variable and they are leased by primary key: the plan no longer depends on how
-- stale the statistics are. The endpoint and event are read for the returned rows after.
--
-- A claim also counts, among each endpoint's attempts in flight, neither the attempts whose
-- receiver has answered with a success and whose outcome the claiming worker has not recorded
-- yet (`p_answered`, the claiming worker's own): they send nothing more, and their leases stay
-- until the outcome is recorded, so none of them is attempted again meanwhile. A failure still
-- holds its endpoint's place until its outcome (and the endpoint's health) is recorded.

-- Down Migration
