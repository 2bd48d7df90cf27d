-- Up Migration

-- docs/architecture.md, "Webhook isolation": the deliveries table is the one queue of webhook
-- deliveries. graphile-worker ran beside it only to wake the dispatchers (a job per retry, per
-- `webhook enable` and per `webhook recover`) and is gone: a worker is woken by
-- `NOTIFY webhook_deliveries_due` when something becomes due now, and by one timer armed from the
-- next due time it reads from the deliveries themselves.

-- Part 1: what is dropped.

-- The recording of scheduled attempts no longer adds a job for each retry: its task parameter goes
-- with them (the function is created again below, without it).
DROP FUNCTION record_scheduled_webhook_attempts(text[], text[], integer[], text[], text[], integer[], timestamptz[], integer[], integer[], text[], text);

-- graphile-worker's own schema, which `migrate` installed for the wake-up jobs: its jobs only said
-- "look", and every delivery they named is still in webhook_deliveries.
DROP SCHEMA IF EXISTS graphile_worker CASCADE;

-- Part 2: the functions as they are now.

-- docs/architecture.md, "Webhook isolation": the recording of a batch of scheduled attempts is one
-- call. It locks the batch's endpoints first, in one order (NO KEY UPDATE, as the health update's
-- own lock: the key-share locks of the booking triggers' new deliveries, their foreign key, do not
-- wait for it, nor it for them), so that two workers' records never deadlock; then, in one
-- statement, each attempt's log entry, its delivery's new state with the body it sent, the due time
-- of the next attempt or the final state, and each endpoint's health, as if its attempts had been
-- recorded one by one in the order they started. An endpoint whose health this batch leaves as it
-- was (healthy, and answered) keeps its row: only a change writes one. Each retry's milliseconds
-- from now come back, so that the recording worker arms its timer for it; due deliveries that
-- waited for the places the batch frees are announced to every worker.
CREATE OR REPLACE FUNCTION record_scheduled_webhook_attempts(p_endpoint_ids text[], p_ids text[], p_numbers integer[], p_states text[], p_bodies text[],
                                                  p_delays integer[], p_started_at timestamptz[], p_durations integer[],
                                                  p_statuses integer[], p_errors text[])
  RETURNS TABLE (id text, next timestamptz, in_ms double precision, gone boolean)
  LANGUAGE plpgsql
  AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM webhook_endpoints WHERE id = ANY (p_endpoint_ids) ORDER BY id FOR NO KEY UPDATE;
  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(p_ids, p_numbers, p_states, p_bodies, p_delays, p_started_at, p_durations, p_statuses, p_errors)
      AS i (id, number, state, body, delay, started_at, duration_ms, http_status, error)
  ), delivery AS (
    UPDATE webhook_deliveries d
       SET attempts = i.number, lease_until = NULL, updated_at = now(), body = coalesce(d.body, i.body),
           -- An endpoint removed during the attempt stays cancelled: the attempt is logged, no retry follows.
           state = CASE WHEN d.state = 'cancelled' THEN d.state ELSE i.state::webhook_delivery_state END,
           next_attempt_at = CASE WHEN i.delay IS NULL OR d.state = 'cancelled' THEN NULL
                                  ELSE clock_timestamp() + i.delay * interval '1 millisecond' END,
           finished_at = CASE WHEN i.delay IS NULL OR d.state = 'cancelled' THEN coalesce(d.finished_at, now()) END
      FROM input i
     WHERE d.id = i.id
     RETURNING d.id, d.series, d.endpoint_id, d.next_attempt_at
  ), logged AS (
    INSERT INTO webhook_attempts (delivery_id, series, number, manual, started_at, duration_ms, http_status, error, next_attempt_at)
    SELECT d.id, d.series, i.number, false, i.started_at, i.duration_ms, i.http_status, i.error, d.next_attempt_at
      FROM delivery d JOIN input i ON i.id = d.id
  ), outcomes AS (
    SELECT d.endpoint_id, i.started_at, i.error, i.http_status,
           max(i.started_at) FILTER (WHERE i.error IS NULL) OVER (PARTITION BY d.endpoint_id) AS success_at
      FROM delivery d JOIN input i ON i.id = d.id
  ), health AS (
    -- The failures after the endpoint's last success in this batch (all of them when none succeeded).
    SELECT endpoint_id, max(success_at) AS success_at, bool_or(http_status = 410) AS gone,
           count(*) FILTER (WHERE error IS NOT NULL AND started_at > coalesce(success_at, '-infinity')) AS failed,
           min(started_at) FILTER (WHERE error IS NOT NULL AND started_at > coalesce(success_at, '-infinity')) AS failed_since,
           (array_agg(error ORDER BY started_at DESC) FILTER (WHERE error IS NOT NULL))[1] AS last_failure
      FROM outcomes GROUP BY endpoint_id
  ), endpoints AS (
    UPDATE webhook_endpoints e
       SET consecutive_failures = CASE WHEN h.success_at IS NULL THEN e.consecutive_failures ELSE 0 END + h.failed,
           failing_since = CASE WHEN h.success_at IS NULL THEN coalesce(e.failing_since, h.failed_since) ELSE h.failed_since END,
           last_failure = coalesce(h.last_failure, e.last_failure),
           disabled_at = CASE WHEN h.gone AND e.disabled_at IS NULL AND e.removed_at IS NULL THEN now() ELSE e.disabled_at END,
           disabled_reason = CASE WHEN h.gone AND e.disabled_at IS NULL AND e.removed_at IS NULL THEN 'gone' ELSE e.disabled_reason END
      FROM health h
     WHERE e.id = h.endpoint_id
       -- Nothing to write when only successes reach an endpoint without failures (every attempt is a success or a failure).
       AND (h.failed > 0 OR e.consecutive_failures <> 0 OR e.failing_since IS NOT NULL)
     -- Only this transaction sets disabled_at to its own start time.
     RETURNING e.id, h.gone AND e.disabled_reason = 'gone' AND e.disabled_at = now() AS gone
  )
  SELECT d.id, d.next_attempt_at, (extract(epoch FROM d.next_attempt_at - clock_timestamp()) * 1000)::double precision,
         coalesce(en.gone, false) AND i.http_status = 410
           AND row_number() OVER (PARTITION BY d.endpoint_id ORDER BY i.http_status = 410 DESC, d.id) = 1
    FROM delivery d JOIN input i ON i.id = d.id LEFT JOIN endpoints en ON en.id = d.endpoint_id;
  -- The leases released free places of these endpoints and their workspaces: when due deliveries
  -- there wait for a place, every worker is told (at commit), not only the recording one, whose
  -- own places may all be taken.
  IF EXISTS (SELECT FROM webhook_endpoints e
               JOIN webhook_endpoints batch ON batch.workspace_id = e.workspace_id AND batch.id = ANY (p_endpoint_ids)
              WHERE e.removed_at IS NULL AND e.disabled_at IS NULL
                AND EXISTS (SELECT FROM webhook_deliveries w
                             WHERE w.endpoint_id = e.id AND w.state = 'pending' AND w.next_attempt_at <= now()
                               AND (w.lease_until IS NULL OR w.lease_until <= now()))) THEN
    PERFORM pg_notify('webhook_deliveries_due', '');
  END IF;
END
$$;

-- Down Migration
-- The recording as it was, with the job of each retry: it needs graphile-worker's schema, which
-- the release before this one installs at its `migrate`.
DROP FUNCTION record_scheduled_webhook_attempts(text[], text[], integer[], text[], text[], integer[], timestamptz[], integer[], integer[], text[]);
CREATE FUNCTION record_scheduled_webhook_attempts(p_endpoint_ids text[], p_ids text[], p_numbers integer[], p_states text[], p_bodies text[],
                                                  p_delays integer[], p_started_at timestamptz[], p_durations integer[],
                                                  p_statuses integer[], p_errors text[], p_task text)
  RETURNS TABLE (id text, next timestamptz, in_ms double precision, gone boolean)
  LANGUAGE plpgsql
  AS $$
#variable_conflict use_column
BEGIN
  PERFORM 1 FROM webhook_endpoints WHERE id = ANY (p_endpoint_ids) ORDER BY id FOR NO KEY UPDATE;
  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(p_ids, p_numbers, p_states, p_bodies, p_delays, p_started_at, p_durations, p_statuses, p_errors)
      AS i (id, number, state, body, delay, started_at, duration_ms, http_status, error)
  ), delivery AS (
    UPDATE webhook_deliveries d
       SET attempts = i.number, lease_until = NULL, updated_at = now(), body = coalesce(d.body, i.body),
           -- An endpoint removed during the attempt stays cancelled: the attempt is logged, no retry follows.
           state = CASE WHEN d.state = 'cancelled' THEN d.state ELSE i.state::webhook_delivery_state END,
           next_attempt_at = CASE WHEN i.delay IS NULL OR d.state = 'cancelled' THEN NULL
                                  ELSE clock_timestamp() + i.delay * interval '1 millisecond' END,
           finished_at = CASE WHEN i.delay IS NULL OR d.state = 'cancelled' THEN coalesce(d.finished_at, now()) END
      FROM input i
     WHERE d.id = i.id
     RETURNING d.id, d.series, d.endpoint_id, d.next_attempt_at
  ), logged AS (
    INSERT INTO webhook_attempts (delivery_id, series, number, manual, started_at, duration_ms, http_status, error, next_attempt_at)
    SELECT d.id, d.series, i.number, false, i.started_at, i.duration_ms, i.http_status, i.error, d.next_attempt_at
      FROM delivery d JOIN input i ON i.id = d.id
  ), outcomes AS (
    SELECT d.endpoint_id, i.started_at, i.error, i.http_status,
           max(i.started_at) FILTER (WHERE i.error IS NULL) OVER (PARTITION BY d.endpoint_id) AS success_at
      FROM delivery d JOIN input i ON i.id = d.id
  ), health AS (
    -- The failures after the endpoint's last success in this batch (all of them when none succeeded).
    SELECT endpoint_id, max(success_at) AS success_at, bool_or(http_status = 410) AS gone,
           count(*) FILTER (WHERE error IS NOT NULL AND started_at > coalesce(success_at, '-infinity')) AS failed,
           min(started_at) FILTER (WHERE error IS NOT NULL AND started_at > coalesce(success_at, '-infinity')) AS failed_since,
           (array_agg(error ORDER BY started_at DESC) FILTER (WHERE error IS NOT NULL))[1] AS last_failure
      FROM outcomes GROUP BY endpoint_id
  ), endpoints AS (
    UPDATE webhook_endpoints e
       SET consecutive_failures = CASE WHEN h.success_at IS NULL THEN e.consecutive_failures ELSE 0 END + h.failed,
           failing_since = CASE WHEN h.success_at IS NULL THEN coalesce(e.failing_since, h.failed_since) ELSE h.failed_since END,
           last_failure = coalesce(h.last_failure, e.last_failure),
           disabled_at = CASE WHEN h.gone AND e.disabled_at IS NULL AND e.removed_at IS NULL THEN now() ELSE e.disabled_at END,
           disabled_reason = CASE WHEN h.gone AND e.disabled_at IS NULL AND e.removed_at IS NULL THEN 'gone' ELSE e.disabled_reason END
      FROM health h
     WHERE e.id = h.endpoint_id
       -- Nothing to write when only successes reach an endpoint without failures (every attempt is a success or a failure).
       AND (h.failed > 0 OR e.consecutive_failures <> 0 OR e.failing_since IS NOT NULL)
     -- Only this transaction sets disabled_at to its own start time.
     RETURNING e.id, h.gone AND e.disabled_reason = 'gone' AND e.disabled_at = now() AS gone
  ), scheduled AS (
    SELECT count(*) AS jobs FROM graphile_worker.add_jobs(ARRAY(
      SELECT ROW(p_task, json_build_object('deliveryId', id), NULL, next_attempt_at, NULL, id, NULL, NULL)::graphile_worker.job_spec
        FROM delivery WHERE next_attempt_at IS NOT NULL))
  )
  SELECT d.id, d.next_attempt_at, (extract(epoch FROM d.next_attempt_at - clock_timestamp()) * 1000)::double precision,
         coalesce(en.gone, false) AND i.http_status = 410
           AND row_number() OVER (PARTITION BY d.endpoint_id ORDER BY i.http_status = 410 DESC, d.id) = 1
    FROM delivery d JOIN input i ON i.id = d.id LEFT JOIN endpoints en ON en.id = d.endpoint_id, scheduled;
END
$$;
