import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type LabelValues } from 'prom-client';
import type { Database } from '../db/database.ts';
import type { AnswerCache } from '../answer-cache/answer-cache.ts';
import type { KeyActivity } from '../auth/key-activity.ts';
import { countedCounter, type Cell } from './counted-series.ts';

type RequestLabel = 'route' | 'method' | 'status';

/** What /metrics shows of a webhook endpoint's health. */
export interface WebhookEndpointHealth {
  id: string;
  state: string;
  disabledReason: string | null;
  lastFailure: string | null;
  consecutiveFailures: number;
}

/** The counts one request of the public listener adds to, in place (src/observability/counted-series.ts). */
export interface RequestCounts {
  /** `http_requests_total` and `http_request_duration_seconds` of the request's route, method and status. */
  request(route: string, method: string, status: number): RequestCell;
  /** `authentication_failures_total`. */
  readonly authenticationFailures: Cell<never>;
  /** `rate_limit_rejections_total` of one limiter. */
  rateLimitRejections(limiter: string): Cell<'limiter'>;
  /** `response_cache_answers_total` of one answer and outcome. */
  cacheAnswers(answer: string, outcome: string): Cell<'answer' | 'outcome'>;
}

/** One route, method and status of the public listener's requests. */
export interface RequestCell {
  /** Counts a request that took `seconds`. */
  observe(seconds: number): void;
}

/** A pool's connections by state (total, idle, waiting; with `max`, the most it may hold), read when /metrics is scraped. */
function poolGauge(registry: Registry, name: string, help: string, pool: Database['pool'], max = false): void {
  new Gauge({
    name,
    help,
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
      if (max) this.set({ state: 'max' }, pool.options.max);
    },
  });
}

/** The service's Prometheus metrics, one registry per server (tests run several in a process). */
export class Metrics {
  readonly registry = new Registry();
  /** What the public listener's requests count, each in place. */
  readonly requestCounts: RequestCounts;
  readonly statements: Counter;
  readonly webhookAttempts: Counter<'outcome'>;
  readonly webhookEndpointsDisabled: Counter;
  readonly internalFieldUses: Counter<'type' | 'field' | 'token'>;
  readonly internalUnregisteredDocuments: Counter<'token' | 'mode'>;
  readonly #stopCounting: () => void;

  constructor(db: Database) {
    collectDefaultMetrics({ register: this.registry });
    this.requestCounts = createRequestCounts(this.registry);
    this.statements = new Counter({
      name: 'db_statements_total',
      help: 'SQL statements sent through the request path (authentication, rate limits, queries).',
      registers: [this.registry],
    });
    this.webhookAttempts = new Counter({
      name: 'webhook_attempts_total',
      help: 'Webhook delivery attempts made by this process, by outcome (success or the failure class).',
      labelNames: ['outcome'],
      registers: [this.registry],
    });
    this.webhookEndpointsDisabled = new Counter({
      name: 'webhook_endpoints_disabled_total',
      help: 'Webhook endpoints this process disabled because every attempt to them failed for WEBHOOK_DISABLE_AFTER_DAYS.',
      registers: [this.registry],
    });
    this.internalFieldUses = new Counter({
      name: 'internal_graphql_field_uses_total',
      help: 'Operations run on the internal GraphQL endpoint that selected a field, by type, field and token name.',
      labelNames: ['type', 'field', 'token'],
      registers: [this.registry],
    });
    this.internalUnregisteredDocuments = new Counter({
      name: 'internal_graphql_unregistered_documents_total',
      help: 'Documents not registered for their token, by token name and its document mode (log: run and logged; trusted: refused).',
      labelNames: ['token', 'mode'],
      registers: [this.registry],
    });
    this.#stopCounting = db.onQuery(() => this.statements.inc());
    poolGauge(this.registry, 'db_pool_connections', 'PostgreSQL pool connections by state.', db.pool);
  }

  /** Internal GraphQL's own pool (its bulkhead, `openPoolBeside`): its connections by state and its bound, read when /metrics is scraped. */
  observeInternalPool(db: Database): void {
    poolGauge(this.registry, 'internal_graphql_pool_connections', "Internal GraphQL's own database connections by state, and the most it may hold (max).", db.pool, true);
  }

  /** The answer cache's evictions and size, read from it when /metrics is scraped. */
  observeAnswerCache(cache: AnswerCache): void {
    let counted = 0;
    new Counter({
      name: 'response_cache_evictions_total',
      help: 'Cached answers evicted to keep the cache within RESPONSE_CACHE_MAX_BYTES.',
      registers: [this.registry],
      collect() {
        this.inc(cache.evictions - counted);
        counted = cache.evictions;
      },
    });
    new Gauge({
      name: 'response_cache_bytes',
      help: 'Bytes the response cache holds (answers and keys).',
      registers: [this.registry],
      collect() {
        this.set(cache.bytes);
      },
    });
    new Gauge({
      name: 'response_cache_entries',
      help: 'Answers the response cache holds.',
      registers: [this.registry],
      collect() {
        this.set(cache.entries);
      },
    });
    new Gauge({ name: 'response_cache_max_bytes', help: 'RESPONSE_CACHE_MAX_BYTES (0: the cache is off).', registers: [this.registry] }).set(cache.maxBytes);
    const pieces = { reused: 0, built: 0 };
    new Counter({
      name: 'response_cache_pieces_total',
      help: 'Pieces (course runs, bookings) of answers assembled: reused from the answer of an earlier data version, or built.',
      labelNames: ['outcome'],
      registers: [this.registry],
      collect() {
        for (const outcome of ['reused', 'built'] as const) {
          this.inc({ outcome }, cache.pieces[outcome] - pieces[outcome]);
          pieces[outcome] = cache.pieces[outcome];
        }
      },
    });
  }

  /** The API keys' request log and expiry, read from the key activity when /metrics is scraped. */
  observeKeyActivity(activity: Pick<KeyActivity, 'written' | 'notLogged' | 'dropped' | 'expiringSoon'>): void {
    const counted = { written: 0, not_logged: 0, dropped: 0 };
    new Counter<'outcome'>({
      name: 'api_key_request_log_rows_total',
      help: 'Requests with a valid key by what the request log did with them: written, not_logged (beyond KEY_REQUEST_LOG_ROWS_PER_SECOND; counted in the usage) or dropped (the database did not take them).',
      labelNames: ['outcome'],
      registers: [this.registry],
      collect() {
        const now = { written: activity.written, not_logged: activity.notLogged, dropped: activity.dropped };
        for (const outcome of Object.keys(now) as Array<keyof typeof now>) {
          this.inc({ outcome }, now[outcome] - counted[outcome]);
          counted[outcome] = now[outcome];
        }
      },
    });
    new Gauge({
      name: 'api_keys_expiring_soon',
      help: 'Active API keys used in the last day that expire within 7 days (checked every 10 minutes; the log warns once a day per key).',
      registers: [this.registry],
      collect() {
        this.set(activity.expiringSoon);
      },
    });
  }

  /** docs/webhooks.md, "Endpoint health": each endpoint's state and failures since its last success, read when /metrics is scraped. */
  observeWebhookHealth(read: () => Promise<WebhookEndpointHealth[]>): void {
    // Both gauges are collected at once by one scrape: they share one read of the endpoints.
    // (prom-client starts every metric's collect in the same turn of the event loop.)
    let reading: Promise<WebhookEndpointHealth[]> | null = null;
    const endpoints = () => {
      if (!reading) {
        reading = read().catch(() => []);
        setImmediate(() => (reading = null));
      }
      return reading;
    };
    new Gauge<'endpoint' | 'state' | 'reason' | 'last_failure'>({
      name: 'webhook_endpoint_health',
      help: 'Each webhook endpoint not removed, 1 with its state (healthy, failing, disabled), the reason it is disabled and the class of its last failure.',
      labelNames: ['endpoint', 'state', 'reason', 'last_failure'],
      registers: [this.registry],
      async collect() {
        const found = await endpoints();
        this.reset();
        for (const endpoint of found) {
          this.set({ endpoint: endpoint.id, state: endpoint.state, reason: endpoint.disabledReason ?? '', last_failure: endpoint.lastFailure ?? '' }, 1);
        }
      },
    });
    new Gauge<'endpoint'>({
      name: 'webhook_endpoint_consecutive_failures',
      help: 'Failed attempts to a webhook endpoint since its last success (0: healthy).',
      labelNames: ['endpoint'],
      registers: [this.registry],
      async collect() {
        const found = await endpoints();
        this.reset();
        for (const endpoint of found) this.set({ endpoint: endpoint.id }, endpoint.consecutiveFailures);
      },
    });
  }

  dispose(): void {
    this.#stopCounting();
  }
}

/** Cells by key, made on first use: the label sets of the request path are few and fixed. */
function cells<C>(make: (key: string) => C): (key: string) => C {
  const made = new Map<string, C>();
  return (key) => {
    let cell = made.get(key);
    if (cell === undefined) {
      cell = make(key);
      made.set(key, cell);
    }
    return cell;
  };
}

/** The request counts of one registry (a server's, or a test's). */
export function createRequestCounts(registry: Registry): RequestCounts {
  // The duration stays prom-client's own histogram, observed per request with its label set made
  // once: prom-client takes a histogram's buckets only from its own observations.
  const duration = new Histogram<RequestLabel>({
    name: 'http_request_duration_seconds',
    help: 'Time to answer a request on the public listener.',
    labelNames: ['route', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const requests = countedCounter<RequestLabel>({
    name: 'http_requests_total',
    help: 'HTTP requests on the public listener, by route, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const rejections = countedCounter<'limiter'>({
    name: 'rate_limit_rejections_total',
    help: 'Requests answered 429, by limiter (key, authentication, feed, internal_cost).',
    labelNames: ['limiter'],
    registers: [registry],
  });
  const failures = countedCounter<never>({ name: 'authentication_failures_total', help: 'Requests refused with 401 invalid_api_key.', registers: [registry] });
  const answers = countedCounter<'answer' | 'outcome'>({
    name: 'response_cache_answers_total',
    help: 'Answers of /courses, /bookings and the calendar feed by how the response cache produced them (hit, miss, shared, bypass, off).',
    labelNames: ['answer', 'outcome'],
    registers: [registry],
  });
  const cellOf = (labels: LabelValues<RequestLabel>): RequestCell => {
    const counted = requests.cell(labels);
    return {
      observe(seconds) {
        counted.count += 1;
        duration.observe(labels, seconds);
      },
    };
  };
  // Route, method and status by nesting, so that finding a request's cell joins no string.
  const byRoute = cells(() => cells(() => new Map<number, RequestCell>()));
  return {
    request(route, method, status) {
      const byStatus = byRoute(route)(method);
      let cell = byStatus.get(status);
      if (cell === undefined) {
        cell = cellOf({ route, method, status: String(status) });
        byStatus.set(status, cell);
      }
      return cell;
    },
    authenticationFailures: failures.cell({}),
    rateLimitRejections: cells((limiter) => rejections.cell({ limiter })),
    cacheAnswers: (() => {
      const of = cells((answer) => cells((outcome) => answers.cell({ answer, outcome })));
      return (answer: string, outcome: string) => of(answer)(outcome);
    })(),
  };
}
