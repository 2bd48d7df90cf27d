-- Up Migration

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
DROP FUNCTION claim_due_webhook_deliveries(integer, integer, integer, integer);

CREATE FUNCTION claim_due_webhook_deliveries(p_lease_ms integer, p_per_endpoint integer, p_per_workspace integer, p_limit integer, p_answered text[])
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

-- Down Migration
DROP FUNCTION claim_due_webhook_deliveries(integer, integer, integer, integer, text[]);
CREATE FUNCTION claim_due_webhook_deliveries(p_lease_ms integer, p_per_endpoint integer, p_per_workspace integer, p_limit integer)
  RETURNS TABLE (id text, attempts integer, series integer, body text, endpoint_id text, workspace_id text, url text,
                 secret_ciphertext bytea, participants boolean, previous_secret_ciphertext bytea, event_id text,
                 event_type text, test boolean, booking_id text, event_created_at timestamptz, lease_until timestamptz)
  LANGUAGE plpgsql
  AS $$
#variable_conflict use_column
BEGIN
  PERFORM pg_advisory_xact_lock(2003331889, 0);
  RETURN QUERY
  WITH endpoints AS (
    -- Each endpoint's attempts in flight (a removed one's may still run for a lease's time),
    -- counted up to the larger bound (more fills its endpoint and its workspace just as well).
    -- The limit makes it a plain scan of the in-flight index, which marks the entries of
    -- released leases dead as it passes them: leases churn, and a bitmap scan would visit
    -- every one of them in the table until the next vacuum.
    SELECT e.id, e.workspace_id, e.removed_at IS NULL AND e.disabled_at IS NULL AS open,
           (SELECT count(*) FROM (SELECT FROM webhook_deliveries l
                                   WHERE l.endpoint_id = e.id AND l.lease_until IS NOT NULL AND l.lease_until > now()
                                   LIMIT greatest(p_per_endpoint, p_per_workspace)) l) AS busy
      FROM webhook_endpoints e
     WHERE e.removed_at IS NULL OR e.removed_at > now() - p_lease_ms * interval '1 millisecond'
  ), workspace_load AS (
    SELECT workspace_id, sum(busy) AS n FROM endpoints GROUP BY workspace_id
  ), due AS (
    -- Each endpoint's oldest due deliveries, as many as it has free places (test events are never due).
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
    SELECT due.id, due.next_attempt_at, due.endpoint_place,
           coalesce(wl.n, 0) + row_number() OVER (PARTITION BY due.workspace_id ORDER BY due.endpoint_place, due.next_attempt_at, due.id) AS workspace_place
      FROM due LEFT JOIN workspace_load wl ON wl.workspace_id = due.workspace_id
  ), chosen AS (
    SELECT id FROM fair WHERE workspace_place <= p_per_workspace ORDER BY workspace_place, next_attempt_at, id LIMIT p_limit
  ), claimed AS (
    UPDATE webhook_deliveries d SET lease_until = now() + p_lease_ms * interval '1 millisecond', updated_at = now()
      FROM webhook_endpoints e, webhook_events ev
     -- The chosen ids as one array: each row is then fetched by its key, whatever the planner
     -- guesses of the just-filled table (a join with `chosen` was planned as a rescan per pending row).
     WHERE d.id = ANY (ARRAY(SELECT id FROM chosen)) AND e.id = d.endpoint_id AND ev.id = d.event_id AND NOT ev.test
       -- Checked again on the row itself: an operator's attempt may have taken it meanwhile.
       AND d.state = 'pending' AND (d.lease_until IS NULL OR d.lease_until <= now()) AND e.removed_at IS NULL AND e.disabled_at IS NULL
    RETURNING d.id, d.attempts, d.series, d.body, e.id AS endpoint_id, e.workspace_id, e.url, e.secret_ciphertext, e.participants,
              CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret_ciphertext END AS previous_secret_ciphertext,
              ev.id AS event_id, ev.type AS event_type, ev.test, ev.booking_id, ev.created_at AS event_created_at, d.lease_until
  )
  SELECT * FROM claimed;
END
$$;
