-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (listings.sql), which migrate applies after the pending migrations.

-- Down Migration
