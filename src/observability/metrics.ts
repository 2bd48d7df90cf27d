import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from '../db/database.ts';
import type { CacheOutcome, ResponseCache, ResponseCacheEvents } from '../graphql/response-cache.ts';

/** The service's Prometheus metrics, one registry per server (tests run several in a process). */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'method' | 'status'>;
  readonly requestDuration: Histogram<'route' | 'method' | 'status'>;
  readonly rateLimitRejections: Counter<'limiter'>;
  readonly authenticationFailures: Counter;
  readonly statements: Counter;
  readonly webhookAttempts: Counter<'outcome'>;
  readonly webhookEndpointsDisabled: Counter;
  readonly responseCacheAnswers: Counter<'answer' | 'outcome'>;
  readonly responseCacheEvictions: Counter;
  readonly internalFieldUses: Counter<'type' | 'field' | 'token'>;
  readonly internalUnregisteredDocuments: Counter<'token' | 'mode'>;
  readonly #stopCounting: () => void;

  constructor(db: Database) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests on the public listener, by route, method and status.',
      labelNames: ['route', 'method', 'status'],
      registers: [this.registry],
    });
    this.requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer a request on the public listener.',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    this.rateLimitRejections = new Counter({
      name: 'rate_limit_rejections_total',
      help: 'Requests answered 429, by limiter (key, authentication, feed, internal_cost).',
      labelNames: ['limiter'],
      registers: [this.registry],
    });
    this.authenticationFailures = new Counter({
      name: 'authentication_failures_total',
      help: 'Requests refused with 401 invalid_api_key.',
      registers: [this.registry],
    });
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
    this.responseCacheAnswers = new Counter({
      name: 'response_cache_answers_total',
      help: 'Answers of /courses, /bookings and the calendar feed by how the response cache produced them (hit, miss, shared, bypass, off).',
      labelNames: ['answer', 'outcome'],
      registers: [this.registry],
    });
    this.responseCacheEvictions = new Counter({
      name: 'response_cache_evictions_total',
      help: 'Cached answers evicted to keep the cache within RESPONSE_CACHE_MAX_BYTES.',
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
    const pool = db.pool;
    new Gauge({
      name: 'db_pool_connections',
      help: 'PostgreSQL pool connections by state.',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        this.set({ state: 'total' }, pool.totalCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
  }

  /** What the response cache reports, as these counters. */
  get responseCacheEvents(): ResponseCacheEvents {
    return {
      answered: (answer: string, outcome: CacheOutcome) => this.responseCacheAnswers.inc({ answer, outcome }),
      evicted: () => this.responseCacheEvictions.inc(),
    };
  }

  /** The cache's size, read when /metrics is scraped. */
  observeResponseCache(cache: ResponseCache): void {
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
  }

  dispose(): void {
    this.#stopCounting();
  }
}
