-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (booking-events.sql), which migrate applies after the pending migrations.

-- Webhook endpoints of a workspace. The signing secret must be usable for signing, so it cannot be
-- hashed: it is stored encrypted (AES-256-GCM: 12-byte nonce, 16-byte tag, ciphertext) with a key
-- that lives outside the database (WEBHOOK_SECRET_KEY, or the embedded demo's data directory).
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY DEFAULT new_id('whe'),
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  url text NOT NULL CHECK (url LIKE 'https://%' AND length(url) <= 2048),
  secret_ciphertext bytea NOT NULL CHECK (length(secret_ciphertext) > 28),
  -- Registered with participant data: the payload's booking carries `participant`.
  participants boolean NOT NULL DEFAULT false,
  created_by text NOT NULL REFERENCES members (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  removed_at timestamptz
);
CREATE INDEX webhook_endpoints_workspace_active ON webhook_endpoints (workspace_id) WHERE removed_at IS NULL;

-- One event per booking: every insert, by whatever writer, produces exactly one event (docs/contract-rules.md, webhooks.guarantee).
CREATE TABLE webhook_events (
  id text PRIMARY KEY DEFAULT new_id('evt'),
  workspace_id text NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
  type text NOT NULL CHECK (type = 'booking.created'),
  booking_id text NOT NULL UNIQUE REFERENCES bookings (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TYPE webhook_delivery_state AS ENUM ('pending', 'succeeded', 'failed', 'cancelled');

-- One row per event and endpoint that was active when the event was recorded.
CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY DEFAULT new_id('dlv'),
  event_id text NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  state webhook_delivery_state NOT NULL DEFAULT 'pending',
  -- Scheduled attempts made so far (at most 8); manual redeliveries are not counted.
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 8),
  next_attempt_at timestamptz DEFAULT now(),
  -- While set and in the future, an attempt is under way: no other attempt may start.
  lease_until timestamptz,
  -- The exact body, fixed at the first attempt, so that every attempt sends the same bytes.
  body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at);

-- The delivery log: every attempt, scheduled or manual.
CREATE TABLE webhook_attempts (
  id text PRIMARY KEY DEFAULT new_id('att'),
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  -- 1 to 8 for scheduled attempts; null for a manual redelivery.
  number integer CHECK (number BETWEEN 1 AND 8),
  manual boolean NOT NULL DEFAULT false,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL CHECK (duration_ms >= 0),
  http_status integer,
  -- null on success; otherwise the failure class (http_status, redirect, timeout, tls, dns, ...).
  error text,
  next_attempt_at timestamptz,
  CHECK ((number IS NULL) = manual)
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, started_at);

-- Down Migration
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TYPE webhook_delivery_state;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
