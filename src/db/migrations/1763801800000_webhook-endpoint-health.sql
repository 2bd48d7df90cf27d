-- Up Migration

-- docs/webhooks.md, "Endpoint health": every recorded attempt (scheduled or manual; test events
-- count neither way) keeps its endpoint's health, so that `webhook list` and /metrics read it
-- without going through the attempt log: the failures since the last success, when the first of
-- them started, and the class of the last one.
ALTER TABLE webhook_endpoints
  ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
  ADD COLUMN failing_since timestamptz,
  ADD COLUMN last_failure text;

-- Endpoints that exist already take their health from their log.
UPDATE webhook_endpoints e SET consecutive_failures = h.failures, failing_since = h.since, last_failure = h.last
  FROM (SELECT d.endpoint_id, count(*) AS failures, min(a.started_at) AS since, (array_agg(a.error ORDER BY a.started_at DESC))[1] AS last
          FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN webhook_events ev ON ev.id = d.event_id
         WHERE NOT ev.test AND a.error IS NOT NULL
           AND a.started_at > coalesce((SELECT max(s.started_at) FROM webhook_attempts s JOIN webhook_deliveries sd ON sd.id = s.delivery_id
                                          JOIN webhook_events sev ON sev.id = sd.event_id
                                         WHERE sd.endpoint_id = d.endpoint_id AND s.error IS NULL AND NOT sev.test), '-infinity')
         GROUP BY d.endpoint_id) h
 WHERE e.id = h.endpoint_id;

-- Down Migration
ALTER TABLE webhook_endpoints DROP COLUMN last_failure, DROP COLUMN failing_since, DROP COLUMN consecutive_failures;
