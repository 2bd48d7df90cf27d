-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (booking-events.sql), which migrate applies after the pending migrations.

-- Down Migration
