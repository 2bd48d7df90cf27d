-- docs/architecture.md, "Webhook isolation": the deliveries are the queue. A claim is one call, one
-- round trip, instead of a transaction of four (BEGIN, the advisory lock, the claim, COMMIT) whose
-- waits a busy worker stretched. The function takes the lock that makes the claims of all workers
-- take turns, then claims: a volatile function's statements each take a new snapshot, so the
-- claim sees every lease the previous holder of the lock took, and the lock is held until the
-- call's commit.
--
-- The chosen ids are a variable and they are leased by primary key: the plan no longer depends on
-- how stale the statistics are (under a burst, a plan made on statistics from before it walked
-- every open endpoint's pending deliveries). The endpoint and event are read for the returned rows
-- after. A claim also counts, among each endpoint's attempts in flight, neither the attempts whose
-- receiver has answered with a success and whose outcome the claiming worker has not recorded
-- yet (`p_answered`, the claiming worker's own): they send nothing more, and their leases stay
-- until the outcome is recorded, so none of them is attempted again meanwhile. A failure still
-- holds its endpoint's place until its outcome (and the endpoint's health) is recorded.
CREATE OR REPLACE FUNCTION claim_due_webhook_deliveries(p_lease_ms integer, p_per_endpoint integer, p_per_workspace integer, p_limit integer, p_answered text[])
  RETURNS TABLE (id text, attempts integer, series integer, body text, endpoint_id text, workspace_id text, url text,
                 secret_ciphertext bytea, participants boolean, previous_secret_ciphertext bytea, event_id text,
                 event_type text, test boolean, booking_id text, event_created_at timestamptz, lease_until timestamptz)
  LANGUAGE plpgsql
  AS $$
#variable_conflict use_column
DECLARE
  v_chosen text[];
BEGIN
  PERFORM pg_advisory_xact_lock(2003331889, 0);
  v_chosen := ARRAY(
    WITH endpoints AS (
      SELECT e.id, e.workspace_id, e.removed_at IS NULL AND e.disabled_at IS NULL AS open,
             (SELECT count(*) FROM (SELECT FROM webhook_deliveries l
                                     WHERE l.endpoint_id = e.id AND l.lease_until IS NOT NULL AND l.lease_until > now()
                                       AND l.id <> ALL (p_answered)
                                     LIMIT greatest(p_per_endpoint, p_per_workspace)) l) AS busy
        FROM webhook_endpoints e
       WHERE e.removed_at IS NULL OR e.removed_at > now() - p_lease_ms * interval '1 millisecond'
    ), workspace_load AS (
      SELECT workspace_id, sum(busy) AS n FROM endpoints GROUP BY workspace_id
    ), due AS (
      SELECT c.id, c.next_attempt_at, e.workspace_id, e.busy + c.place AS endpoint_place
        FROM endpoints e
       CROSS JOIN LATERAL (
         SELECT d.id, d.next_attempt_at, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS place
           FROM webhook_deliveries d
          WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until <= now())
          ORDER BY d.next_attempt_at, d.id
          LIMIT greatest(p_per_endpoint - e.busy, 0)
       ) c
       WHERE e.open
    ), fair AS (
      SELECT due.id, due.next_attempt_at,
             coalesce(wl.n, 0) + row_number() OVER (PARTITION BY due.workspace_id ORDER BY due.endpoint_place, due.next_attempt_at, due.id) AS workspace_place
        FROM due LEFT JOIN workspace_load wl ON wl.workspace_id = due.workspace_id
    )
    SELECT id FROM fair WHERE workspace_place <= p_per_workspace ORDER BY workspace_place, next_attempt_at, id LIMIT p_limit);
  RETURN QUERY
  WITH claimed AS (
    UPDATE webhook_deliveries d SET lease_until = now() + p_lease_ms * interval '1 millisecond', updated_at = now()
     WHERE d.id = ANY (v_chosen)
       -- Checked again on the row itself: an operator's attempt may have taken it meanwhile. The
       -- state is compared as text so that no partial index of pending deliveries applies: on
       -- statistics from before a burst the planner took a scan of one (every pending delivery)
       -- for cheaper than the primary key.
       AND d.state::text = 'pending' AND (d.lease_until IS NULL OR d.lease_until <= now())
       -- OFFSET 0 keeps each check a lookup per leased row: as a join, the planner (guessing one
       -- open endpoint) walked every endpoint's pending deliveries instead. Asked as "not closed",
       -- so that it is a primary-key lookup, not a scan of the index of open endpoints.
       AND NOT EXISTS (SELECT FROM webhook_endpoints e WHERE e.id = d.endpoint_id AND (e.removed_at IS NOT NULL OR e.disabled_at IS NOT NULL) OFFSET 0)
       AND EXISTS (SELECT FROM webhook_events ev WHERE ev.id = d.event_id AND NOT ev.test OFFSET 0)
    RETURNING d.id, d.attempts, d.series, d.body, d.endpoint_id, d.event_id, d.lease_until
  )
  SELECT c.id, c.attempts, c.series, c.body, e.id, e.workspace_id, e.url, e.secret_ciphertext, e.participants,
         CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_ciphertext END,
         ev.id, ev.type, ev.test, ev.booking_id, ev.created_at, c.lease_until
    FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id JOIN webhook_events ev ON ev.id = c.event_id;
END
$$;

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
