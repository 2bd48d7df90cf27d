-- Up Migration

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

-- Runs in the inserting statement's transaction: the events, their deliveries (one per endpoint
-- active now) and the delivery jobs commit or roll back together with the bookings. Once per
-- statement, over all its new rows, so that a bulk insert (an import) costs three statements here,
-- not three per booking.
CREATE FUNCTION record_bookings_created() RETURNS trigger
  LANGUAGE plpgsql
  AS $$
DECLARE
  v_jobs integer;
BEGIN
  WITH events AS (
    INSERT INTO webhook_events (workspace_id, type, booking_id)
    SELECT workspace_id, 'booking.created', id FROM new_bookings
    RETURNING id, workspace_id
  ), deliveries AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id)
    SELECT events.id, endpoints.id
      FROM events JOIN webhook_endpoints endpoints ON endpoints.workspace_id = events.workspace_id AND endpoints.removed_at IS NULL
    RETURNING id
  ), specs AS (
    SELECT array_agg(ROW('webhook_deliver', json_build_object('deliveryId', id), NULL, NULL, NULL, id, NULL, NULL)::graphile_worker.job_spec) AS list
      FROM deliveries
  )
  SELECT count(*) INTO v_jobs
    FROM specs, LATERAL graphile_worker.add_jobs(specs.list)
   WHERE specs.list IS NOT NULL;
  RETURN NULL;
END
$$;

CREATE TRIGGER bookings_record_created AFTER INSERT ON bookings
  REFERENCING NEW TABLE AS new_bookings
  FOR EACH STATEMENT EXECUTE FUNCTION record_bookings_created();

-- Down Migration
DROP TRIGGER bookings_record_created ON bookings;
DROP FUNCTION record_bookings_created();
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TYPE webhook_delivery_state;
DROP TABLE webhook_events;
DROP TABLE webhook_endpoints;
