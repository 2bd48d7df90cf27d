-- Up Migration

-- The functions and triggers this migration wrote are defined, as they are today, in src/db/code/
-- (booking-events.sql, trigger-roles.sql), which migrate applies after the pending migrations.

-- booking.updated: one event per committed transaction that changes what a booking looks like in
-- the public representation (docs/webhooks.md, "booking.updated"); endpoints choose their event
-- types; test events; an endpoint disabled because its receiver answered 410 Gone.

-- Endpoints registered before receive what they always received: booking.created alone.
ALTER TABLE webhook_endpoints
  ADD COLUMN event_types text[] NOT NULL DEFAULT '{booking.created}'
    CONSTRAINT webhook_endpoints_event_types CHECK (cardinality(event_types) > 0 AND event_types <@ '{booking.created,booking.updated}'),
  -- Why a disabled endpoint is: `failing` (WEBHOOK_DISABLE_AFTER_DAYS of failed attempts) or `gone`
  -- (its receiver answered 410). Null while enabled; an endpoint disabled before reasons existed
  -- reads as `failing`.
  ADD COLUMN disabled_reason text CONSTRAINT webhook_endpoints_disabled_reason CHECK (disabled_reason IN ('failing', 'gone'));

-- A test event (`webhook test`) has an example booking in its stored body and none in the database.
-- `transaction_id` is the transaction that recorded the event: a booking gets at most one event per
-- transaction, so that a booking created and changed in one transaction gets booking.created alone,
-- and several changes in one transaction make one booking.updated. Events recorded before have 0.
-- A booking.updated event keeps the booking (and, for endpoints with participant data, its
-- participant) as they were before the transaction and at its commit, as the rows' JSON: the
-- payload is built from them by the fixed GraphQL operation, as the REST answers are.
ALTER TABLE webhook_events
  DROP CONSTRAINT webhook_events_type_check,
  ADD CONSTRAINT webhook_events_type_check CHECK (type IN ('booking.created', 'booking.updated')),
  ALTER COLUMN booking_id DROP NOT NULL,
  ADD COLUMN test boolean NOT NULL DEFAULT false,
  ADD CONSTRAINT webhook_events_test_has_no_booking CHECK ((booking_id IS NULL) = test),
  ADD COLUMN transaction_id bigint NOT NULL DEFAULT 0,
  -- Set while the recording transaction runs: its commit closes the event (see below).
  ADD COLUMN closing boolean NOT NULL DEFAULT false,
  ADD COLUMN with_participant boolean NOT NULL DEFAULT false,
  ADD COLUMN booking_before jsonb,
  ADD COLUMN booking_after jsonb,
  ADD COLUMN participant_before jsonb,
  ADD COLUMN participant_after jsonb,
  -- Participant data (personal) is erased WEBHOOK_BODY_RETENTION_DAYS after the event's deliveries ended.
  ADD COLUMN participant_erased_at timestamptz;
ALTER TABLE webhook_events ALTER COLUMN transaction_id SET DEFAULT txid_current();
ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_booking_id_key;
CREATE UNIQUE INDEX webhook_events_booking_transaction ON webhook_events (booking_id, transaction_id);
CREATE INDEX webhook_events_closing ON webhook_events (transaction_id) WHERE closing;
CREATE INDEX webhook_events_participant_kept ON webhook_events (created_at) WHERE with_participant AND participant_erased_at IS NULL;

-- Down Migration
DROP INDEX webhook_events_participant_kept;
DROP INDEX webhook_events_closing;
DELETE FROM webhook_events WHERE type <> 'booking.created' OR test;
DROP INDEX webhook_events_booking_transaction;
ALTER TABLE webhook_events
  ADD CONSTRAINT webhook_events_booking_id_key UNIQUE (booking_id),
  DROP COLUMN participant_erased_at,
  DROP COLUMN participant_after,
  DROP COLUMN participant_before,
  DROP COLUMN booking_after,
  DROP COLUMN booking_before,
  DROP COLUMN with_participant,
  DROP COLUMN closing,
  DROP COLUMN transaction_id,
  DROP CONSTRAINT webhook_events_test_has_no_booking,
  DROP COLUMN test,
  ALTER COLUMN booking_id SET NOT NULL,
  DROP CONSTRAINT webhook_events_type_check,
  ADD CONSTRAINT webhook_events_type_check CHECK (type = 'booking.created');
ALTER TABLE webhook_endpoints DROP COLUMN disabled_reason, DROP COLUMN event_types;
