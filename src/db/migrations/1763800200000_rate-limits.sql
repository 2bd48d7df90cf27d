-- Up Migration

-- The shape rate-limiter-flexible's PostgreSQL store expects (RATE_LIMIT_STORE=postgres).
CREATE TABLE rate_limits (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);

-- Down Migration
DROP TABLE rate_limits;
