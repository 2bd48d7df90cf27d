import type { Queryable } from '../db/database.ts';

/** One request of a key's log, as a batch carries it to the database. */
export interface RequestRow {
  keyId: string;
  /** When it arrived, ms since the epoch. */
  at: number;
  method: string;
  path: string;
  status: number;
  errorCode: string | null;
  durationMs: number;
  requestId: string;
  network: string | null;
  cache: string | null;
}

/** One key's requests of one day (UTC) by status class. */
export interface UsageCounts {
  keyId: string;
  /** Days since the epoch (UTC). */
  day: number;
  s2xx: number;
  s3xx: number;
  s4xx: number;
  s5xx: number;
  rateLimited: number;
  notLogged: number;
}

const DAY_MS = 86_400_000;

/** Rows in key order (then `then`): every statement below locks its keys' rows in this one order. */
function inKeyOrder<T extends { keyId: string }>(rows: readonly T[], then: (a: T, b: T) => number = () => 0): T[] {
  return [...rows].sort((a, b) => (a.keyId < b.keyId ? -1 : a.keyId > b.keyId ? 1 : then(a, b)));
}

/** The rows as one array per field, in `fields`' order: the parameters of an `unnest(…)`. */
function columns<T>(rows: readonly T[], fields: ReadonlyArray<keyof T>): unknown[][] {
  return fields.map((field) => rows.map((row) => row[field]));
}

/**
 * Writes a batch of log rows in one statement, each into its key's ring of `maxRows`: the key's
 * count of logged rows hands out the slots, a new row takes the place of the oldest, so a key's
 * log never holds more than `maxRows` rows and a write costs the same however full it is. Counts
 * are taken in key order (instances writing at once wait, never deadlock); rows of a key deleted
 * meanwhile are dropped. Returns how many rows were written.
 */
export async function writeRequestRows(db: Queryable, rows: readonly RequestRow[], maxRows: number): Promise<number> {
  if (rows.length === 0) return 0;
  const ordered = inKeyOrder(rows, (a, b) => a.at - b.at);
  const written = await db.query(
    `WITH batch AS (
       SELECT b.*, row_number() OVER (PARTITION BY b.api_key_id ORDER BY b.n) AS nth, count(*) OVER (PARTITION BY b.api_key_id) AS total
         FROM unnest($1::text[], $2::float8[], $3::text[], $4::text[], $5::int[], $6::text[], $7::float8[], $8::text[], $9::text[], $10::text[])
              WITH ORDINALITY AS b(api_key_id, at_ms, method, path, status, error_code, duration_ms, request_id, client_network, cache, n)
     ), counted AS (
       INSERT INTO api_key_request_counts AS c (api_key_id, logged)
       SELECT k.id, per_key.n FROM (SELECT api_key_id, count(*) AS n FROM batch GROUP BY api_key_id) per_key
         JOIN api_keys k ON k.id = per_key.api_key_id
        ORDER BY k.id
       ON CONFLICT (api_key_id) DO UPDATE SET logged = c.logged + excluded.logged
       RETURNING api_key_id, logged
     )
     INSERT INTO api_key_requests AS r (api_key_id, slot, requested_at, method, path, status, error_code, duration_ms, request_id, client_network, cache)
     SELECT b.api_key_id, ((c.logged - b.total + b.nth - 1) % $11)::int, to_timestamp(b.at_ms / 1000), b.method, b.path, b.status,
            b.error_code, b.duration_ms, b.request_id, b.client_network, b.cache
       FROM batch b JOIN counted c USING (api_key_id)
      WHERE b.nth > b.total - $11
     ON CONFLICT (api_key_id, slot) DO UPDATE
       SET id = new_id('req'), requested_at = excluded.requested_at, method = excluded.method, path = excluded.path,
           status = excluded.status, error_code = excluded.error_code, duration_ms = excluded.duration_ms,
           request_id = excluded.request_id, client_network = excluded.client_network, cache = excluded.cache`,
    [...columns(ordered, ['keyId', 'at', 'method', 'path', 'status', 'errorCode', 'durationMs', 'requestId', 'network', 'cache']), maxRows],
  );
  return written.rowCount ?? 0;
}

/** The counts of one key and day added up: one statement may change each of their rows once only. */
function perKeyAndDay(counts: readonly UsageCounts[]): UsageCounts[] {
  const merged = new Map<string, UsageCounts>();
  for (const count of counts) {
    const at = `${count.keyId} ${count.day}`;
    const known = merged.get(at);
    if (!known) merged.set(at, { ...count });
    else for (const field of ['s2xx', 's3xx', 's4xx', 's5xx', 'rateLimited', 'notLogged'] as const) known[field] += count[field];
  }
  return [...merged.values()];
}

/**
 * Adds requests to the keys' daily counts, in one statement, rows locked in key and day order.
 * Counts of one key and day given apart (a day's counts kept through an outage, and the new ones)
 * are added up first.
 */
export async function addUsage(db: Queryable, counts: readonly UsageCounts[]): Promise<void> {
  if (counts.length === 0) return;
  const ordered = inKeyOrder(perKeyAndDay(counts), (a, b) => a.day - b.day);
  await db.query(
    `INSERT INTO api_key_usage AS u (api_key_id, day, status_2xx, status_3xx, status_4xx, status_5xx, rate_limited, not_logged)
     SELECT k.id, date '1970-01-01' + c.day, c.s2, c.s3, c.s4, c.s5, c.rl, c.nl
       FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[])
            WITH ORDINALITY AS c(api_key_id, day, s2, s3, s4, s5, rl, nl, n)
       JOIN api_keys k ON k.id = c.api_key_id
      ORDER BY c.n
     ON CONFLICT (api_key_id, day) DO UPDATE
       SET status_2xx = u.status_2xx + excluded.status_2xx, status_3xx = u.status_3xx + excluded.status_3xx,
           status_4xx = u.status_4xx + excluded.status_4xx, status_5xx = u.status_5xx + excluded.status_5xx,
           rate_limited = u.rate_limited + excluded.rate_limited, not_logged = u.not_logged + excluded.not_logged`,
    columns(ordered, ['keyId', 'day', 's2xx', 's3xx', 's4xx', 's5xx', 'rateLimited', 'notLogged']),
  );
}

/**
 * Records keys' last uses (ms since the epoch, and the client's network), writing a key's row only
 * when its stored last use is at least `minIntervalS` older: however many instances record a key,
 * its row is written at most once per that interval. Returns the keys written that expire.
 */
export async function recordLastUses(
  db: Queryable,
  uses: ReadonlyArray<{ keyId: string; at: number; network: string | null }>,
  minIntervalS: number,
): Promise<Array<{ id: string; expiresAt: Date }>> {
  if (uses.length === 0) return [];
  const ordered = inKeyOrder(uses);
  const written = await db.query<{ id: string; expires_at: Date | null }>(
    `UPDATE api_keys k SET last_used_at = to_timestamp(u.at_ms / 1000), last_used_network = u.network
       FROM unnest($1::text[], $2::float8[], $3::text[]) AS u(id, at_ms, network)
      WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at <= to_timestamp(u.at_ms / 1000) - $4 * interval '1 second')
      RETURNING k.id, k.expires_at`,
    [...columns(ordered, ['keyId', 'at', 'network']), minIntervalS],
  );
  return written.rows.filter((row) => row.expires_at !== null).map((row) => ({ id: row.id, expiresAt: row.expires_at! }));
}

/** Deletes log rows older than `retentionMs` (in slices, so that no statement holds many locks) and daily counts older than `usageDays`. */
export async function deleteOldActivity(db: Queryable, retentionMs: number, usageDays: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const slice = await db.query(
      `DELETE FROM api_key_requests WHERE id IN (
         SELECT id FROM api_key_requests WHERE requested_at < now() - $1 * interval '1 millisecond' LIMIT 5000)`,
      [retentionMs],
    );
    deleted += slice.rowCount ?? 0;
    if ((slice.rowCount ?? 0) < 5000) break;
  }
  await db.query("DELETE FROM api_key_usage WHERE day < (now() AT TIME ZONE 'UTC')::date - $1::int", [usageDays]);
  return deleted;
}

export interface ExpiringKeys {
  /** Active keys used in the last day that expire within 7 days. */
  soon: number;
  /** Those of them not warned about in the last day: this call claimed their warning. */
  warn: Array<{ id: string; workspaceId: string; expiresAt: string; lastUsedAt: string }>;
}

/**
 * The keys used in the last day that expire within the next 7, and the ones among them whose
 * warning is due: each key's warning is claimed by one instance once a day, so every instance may
 * ask and the log still says it once.
 */
export async function claimExpiryWarnings(db: Queryable): Promise<ExpiringKeys> {
  const found = await db.query<{ soon: number; warn: ExpiringKeys['warn'] }>(
    `WITH soon AS (
       SELECT id FROM api_keys
        WHERE revoked_at IS NULL AND expires_at > now() AND expires_at <= now() + interval '7 days' AND last_used_at > now() - interval '1 day'
     ), warned AS (
       UPDATE api_keys k SET expiry_warned_at = now() FROM soon
        WHERE k.id = soon.id AND (k.expiry_warned_at IS NULL OR k.expiry_warned_at <= now() - interval '1 day')
       RETURNING k.id, k.workspace_id, k.expires_at, k.last_used_at
     )
     SELECT (SELECT count(*)::int FROM soon) AS soon,
            coalesce((SELECT json_agg(json_build_object('id', id, 'workspaceId', workspace_id, 'expiresAt', expires_at, 'lastUsedAt', last_used_at) ORDER BY id)
                        FROM warned), '[]'::json) AS warn`,
  );
  const row = found.rows[0]!;
  const iso = (value: string) => new Date(value).toISOString();
  return { soon: row.soon, warn: row.warn.map((key) => ({ ...key, expiresAt: iso(key.expiresAt), lastUsedAt: iso(key.lastUsedAt) })) };
}

export { DAY_MS };

/** A row of a key's request log as `key log` and internal GraphQL show it: the written row, its time as ISO 8601. */
export type LoggedRequest = Omit<RequestRow, 'keyId' | 'at' | 'network'> & { requestedAt: string; clientNetwork: string | null };

/** A key's logged requests, newest first: since a time, with a status in a range (`429`: 429 to 429, `4xx`: 400 to 499), at most `limit`. */
export async function readRequestLog(db: Queryable, keyId: string, filter: { since?: Date | undefined; status?: { from: number; to: number } | undefined; limit: number }): Promise<LoggedRequest[]> {
  const found = await db.query<{ requested_at: Date; method: string; path: string; status: number; error_code: string | null; duration_ms: number; request_id: string; client_network: string | null; cache: string | null }>(
    `SELECT requested_at, method, path, status, error_code, duration_ms, request_id, client_network, cache
       FROM api_key_requests
      WHERE api_key_id = $1 AND ($2::timestamptz IS NULL OR requested_at >= $2) AND status BETWEEN $3 AND $4
      ORDER BY requested_at DESC, id DESC
      LIMIT $5`,
    [keyId, filter.since ?? null, filter.status?.from ?? 100, filter.status?.to ?? 599, filter.limit],
  );
  return found.rows.map((row) => ({
    requestedAt: row.requested_at.toISOString(),
    method: row.method,
    path: row.path,
    status: row.status,
    errorCode: row.error_code,
    durationMs: row.duration_ms,
    requestId: row.request_id,
    clientNetwork: row.client_network,
    cache: row.cache,
  }));
}

/** A key's requests of one day (UTC). */
export interface DailyUsage {
  day: string;
  requests: number;
  status2xx: number;
  status3xx: number;
  status4xx: number;
  status5xx: number;
  /** 429s, counted in status4xx too. */
  rateLimited: number;
  /** Requests counted here whose row the request log did not keep. */
  notLogged: number;
}

/** A key's requests per day over the last `days` days (UTC, today included), newest first; a day without requests has zeros. */
export async function readUsage(db: Queryable, keyId: string, days: number): Promise<DailyUsage[]> {
  const found = await db.query<{ day: string; s2: string; s3: string; s4: string; s5: string; rl: string; nl: string }>(
    `SELECT to_char(d.day, 'YYYY-MM-DD') AS day, coalesce(u.status_2xx, 0) AS s2, coalesce(u.status_3xx, 0) AS s3, coalesce(u.status_4xx, 0) AS s4,
            coalesce(u.status_5xx, 0) AS s5, coalesce(u.rate_limited, 0) AS rl, coalesce(u.not_logged, 0) AS nl
       FROM generate_series((now() AT TIME ZONE 'UTC')::date - ($2::int - 1), (now() AT TIME ZONE 'UTC')::date, interval '1 day') AS d(day)
       LEFT JOIN api_key_usage u ON u.api_key_id = $1 AND u.day = d.day::date
      ORDER BY d.day DESC`,
    [keyId, days],
  );
  return found.rows.map((row) => {
    const [s2, s3, s4, s5] = [row.s2, row.s3, row.s4, row.s5].map(Number) as [number, number, number, number];
    return { day: row.day, requests: s2 + s3 + s4 + s5, status2xx: s2, status3xx: s3, status4xx: s4, status5xx: s5, rateLimited: Number(row.rl), notLogged: Number(row.nl) };
  });
}
