import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

/** The names express's `trust proxy` setting (proxy-addr) gives to address ranges. */
const NAMED_PROXY_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY`: which proxies may tell the client address in `X-Forwarded-For`, in express's own
 * forms: `false`, a hop count, or a comma-separated list of addresses, CIDR ranges and the names
 * loopback, linklocal and uniquelocal. `true` would take the left-most entry, which the client
 * writes itself, so it is refused.
 */
const trustProxy = z.string().transform((value, context): false | number | string[] => {
  const text = value.trim();
  if (/^(false|no)$/i.test(text)) return false;
  if (/^(true|yes)$/i.test(text)) {
    context.addIssue({
      code: 'custom',
      message:
        'true is not accepted: it would trust every X-Forwarded-For entry, which clients write themselves; set the number of proxies in front of the service (e.g. 1) or their addresses (e.g. loopback or 10.0.0.0/8)',
    });
    return z.NEVER;
  }
  if (/^\d+$/.test(text)) return Number.parseInt(text, 10) || false;
  const entries = text.split(',').map((entry) => entry.trim());
  const invalid = entries.filter((entry) => !NAMED_PROXY_RANGES.has(entry) && !ipaddr.isValid(entry) && !ipaddr.isValidCIDR(entry));
  if (invalid.length > 0) {
    context.addIssue({
      code: 'custom',
      message: `${invalid.map((entry) => JSON.stringify(entry)).join(', ')} is not a hop count, an address, a CIDR range or one of loopback, linklocal, uniquelocal`,
    });
    return z.NEVER;
  }
  return entries;
});

/**
 * `PORTAL_FRAME_ANCESTORS`: the origins whose pages may show the integrations page in an
 * `<iframe>` (its CSP's `frame-ancestors`), separated by spaces or commas; none by default. Each is
 * an origin alone (`https://dashboard.example.com`, a port if not the default), as CSP matches it:
 * a path, a wildcard or a keyword would widen or break the policy.
 */
const frameAncestors = z.string().transform((value, context): string[] => {
  const entries = value.split(/[\s,]+/).filter((entry) => entry !== '');
  const invalid = entries.filter((entry) => {
    try {
      const url = new URL(entry);
      return (url.protocol !== 'https:' && url.protocol !== 'http:') || !/^[a-z0-9.-]+$|^\[[0-9a-f:.]+\]$/.test(url.hostname) || url.origin !== entry.replace(/\/$/, '').toLowerCase();
    } catch {
      return true;
    }
  });
  if (invalid.length > 0) {
    context.addIssue({ code: 'custom', message: `${invalid.map((entry) => JSON.stringify(entry)).join(', ')} is not an origin such as https://dashboard.example.com (scheme, host and port only)` });
    return z.NEVER;
  }
  return entries.map((entry) => new URL(entry).origin);
});

/** The contract's schedule (docs/contract-rules.md, webhooks.schedule): the wait after each of the first seven failures. */
export const DEFAULT_RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

const retryDelays = z
  .string()
  .regex(/^\s*\d+(\s*,\s*\d+){6}\s*$/, 'must be seven comma-separated delays in milliseconds')
  .transform((value) => value.split(',').map((delay) => Number.parseInt(delay.trim(), 10)));

const isEncryptionKey = (value: string) => /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === 32;

/** One key, or several separated by commas, newest first: base64 of 32 bytes each. */
const encryptionKeys = z
  .string()
  .transform((value) => value.split(',').map((key) => key.trim()))
  .refine((keys) => keys.every(isEncryptionKey), 'must be base64 of 32 bytes, or several such keys separated by commas (newest first)');

/** A number of days; fractions are allowed (0.5 is 12 hours), so that tests can use seconds. */
const days = z.coerce.number().positive().finite();

/** The response cache's bound: 64 MiB of answers (README: Configuration; docs/benchmarks.md measures it). */
export const DEFAULT_RESPONSE_CACHE_MAX_BYTES = 64 * 1024 * 1024;

/** One second of database time per minute (a point is 10 µs): five requests at the limit of 20,000, or many more small ones. */
export const DEFAULT_INTERNAL_COST_PER_MINUTE = 100_000;

/** The OTLP transports the trace exporter speaks (docs/tracing.md). */
const otlpProtocol = z.enum(['http/protobuf', 'http/json', 'grpc']);
const otlpEndpoint = z.string().regex(/^https?:\/\//, 'must be an http:// or https:// URL');

/** Every environment variable the service reads, with its default (README: Configuration). */
export const configSchema = z
  .object({
    PORT: port.default(3000),
    HOST: z.string().min(1).default('127.0.0.1'),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    DATABASE_DIRECT_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    DATABASE_REPLICA_URL: z
      .string()
      .transform((value) => value.split(',').map((url) => url.trim()).filter((url) => url !== ''))
      .refine((urls) => urls.every((url) => /^postgres(ql)?:\/\//.test(url)), 'must be postgres:// or postgresql:// URLs, comma-separated')
      .optional(),
    DATABASE_REPLICA_MAX_LAG_MS: positiveInt.max(600_000).default(1000),
    DATABASE_PREPARED_STATEMENTS: z.enum(['auto', 'true', 'false']).default('auto'),
    DATA_DIR: z.string().min(1).default('./.data'),
    DEMO: bool.optional(),
    DB_POOL_SIZE: positiveInt.max(200).default(10),
    DB_STATEMENT_TIMEOUT_MS: positiveInt.default(5000),
    // Where the public listener is reached from outside: the integrations page's links start with it (default: the listener's own URL).
    PUBLIC_URL: z
      .string()
      .regex(/^https?:\/\/[^/?#]+\/?$/, 'must be an http:// or https:// origin, e.g. https://api.example.com')
      .transform((value) => value.replace(/\/$/, ''))
      .optional(),
    INTERNAL_PORT: port.default(4001),
    INTERNAL_HOST: z.string().min(1).default('127.0.0.1'),
    INTERNAL_API_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    // Cost points per minute of an internal token without a budget of its own (docs/internal-graphql.md).
    INTERNAL_COST_PER_MINUTE: positiveInt.max(1_000_000_000).default(DEFAULT_INTERNAL_COST_PER_MINUTE),
    // The cap: the largest work estimate of one request (200 ms of database time); its statements stop at 1.5 times that.
    INTERNAL_COST_PER_REQUEST: positiveInt.max(10_000_000).default(20_000),
    // Internal GraphQL's own connections and statement timeout, beside the public API's (docs/internal-graphql.md, Bulkhead).
    INTERNAL_DB_POOL_SIZE: positiveInt.max(100).default(2),
    INTERNAL_STATEMENT_TIMEOUT_MS: positiveInt.max(600_000).default(1000),
    HEADERS_TIMEOUT_MS: positiveInt.max(600_000).default(10_000),
    REQUEST_TIMEOUT_MS: positiveInt.max(600_000).default(30_000),
    // Longer than the idle timeout of the proxies and clients in front (60 s at the common load
    // balancers, 4 s in Node's fetch): the client closes an idle connection first, never the
    // server while a request is already on its way, which the client meets as a reset.
    KEEP_ALIVE_TIMEOUT_MS: positiveInt.max(600_000).default(65_000),
    MAX_CONNECTIONS: positiveInt.max(1_000_000).default(1000),
    RATE_LIMIT_STORE: z.enum(['memory', 'redis', 'postgres']).default('memory'),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
      .optional(),
    RATE_LIMIT_MAX: positiveInt.default(120),
    RATE_LIMIT_WINDOW_S: positiveInt.default(60),
    AUTH_FAILURE_LIMIT: positiveInt.default(30),
    AUTH_FAILURE_WINDOW_S: positiveInt.default(60),
    FEED_RATE_LIMIT_MAX: positiveInt.default(120),
    FEED_RATE_LIMIT_WINDOW_S: positiveInt.default(60),
    PORTAL_RATE_LIMIT_MAX: positiveInt.default(120),
    PORTAL_RATE_LIMIT_WINDOW_S: positiveInt.default(60),
    RATE_LIMIT_CLEANUP_INTERVAL_S: positiveInt.max(86_400).default(60),
    KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(1000).default(500),
    // A key's last use is written at most once per this many seconds, across instances (a minute; shorter only for tests).
    KEY_LAST_USED_INTERVAL_S: positiveInt.max(3600).default(60),
    KEY_REQUEST_LOG: bool.default(true),
    KEY_REQUEST_LOG_FLUSH_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
    KEY_REQUEST_LOG_RETENTION_DAYS: days.max(366).default(7),
    KEY_REQUEST_LOG_MAX_ROWS: positiveInt.max(1_000_000).default(10_000),
    KEY_REQUEST_LOG_ROWS_PER_SECOND: positiveInt.max(10_000).default(100),
    KEY_USAGE_RETENTION_DAYS: positiveInt.max(3660).default(90),
    RESPONSE_CACHE_MAX_BYTES: z.coerce.number().int().min(0).max(2 ** 40).default(DEFAULT_RESPONSE_CACHE_MAX_BYTES),
    SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
    TRUST_PROXY: trustProxy.default(false),
    PORTAL_FRAME_ANCESTORS: frameAncestors.default([]),
    WEBHOOK_WORKER: bool.default(true),
    // docs/architecture.md, "Webhook isolation": attempts in flight per process, and across all
    // processes per endpoint and per workspace, so that no receiver holds more than its share.
    WEBHOOK_CONCURRENCY: positiveInt.max(500).default(100),
    WEBHOOK_ENDPOINT_CONCURRENCY: positiveInt.max(500).default(4),
    WEBHOOK_WORKSPACE_CONCURRENCY: positiveInt.max(500).default(8),
    WEBHOOK_DB_POOL_SIZE: positiveInt.max(100).default(8),
    WEBHOOK_POLL_INTERVAL_MS: positiveInt.optional(),
    WEBHOOK_RETRY_DELAYS_MS: retryDelays.default(DEFAULT_RETRY_DELAYS_MS),
    WEBHOOK_TIMEOUT_MS: positiveInt.max(60_000).default(15_000),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: bool.default(false),
    WEBHOOK_SECRET_KEY: encryptionKeys.optional(),
    WEBHOOK_BODY_RETENTION_DAYS: days.default(30),
    WEBHOOK_DISABLE_AFTER_DAYS: days.default(5),
    // Read again by the OpenTelemetry SDK itself, with the other OTEL_* variables (docs/tracing.md);
    // checked here so that a mistyped value stops the start instead of silently exporting nothing.
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint.optional(),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpEndpoint.optional(),
    OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional(),
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
    OTEL_SDK_DISABLED: bool.default(false),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  });

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  readonly problems: string[];

  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Reads the configuration; every problem is reported at once, naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([name, value]) => name in configSchema.shape && value !== undefined && value !== ''),
  );
  const parsed = configSchema.safeParse(present);
  const problems = parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  // Checked on the raw values too, so that it is reported together with every other problem.
  if (present.RATE_LIMIT_STORE === 'redis' && !present.REDIS_URL) problems.push('REDIS_URL: is required when RATE_LIMIT_STORE=redis');
  if (present.DATABASE_DIRECT_URL && !present.DATABASE_URL) problems.push('DATABASE_DIRECT_URL: needs DATABASE_URL (the embedded database has no pooler in front of it)');
  if (present.DATABASE_REPLICA_URL && !present.DATABASE_URL) problems.push('DATABASE_REPLICA_URL: needs DATABASE_URL (the primary)');
  if (present.METRICS_TOKEN && !present.INTERNAL_API_TOKEN) problems.push('METRICS_TOKEN: needs INTERNAL_API_TOKEN (the internal listener serves /metrics)');
  // Node refuses a header timeout longer than the request timeout.
  if (parsed.success && parsed.data.HEADERS_TIMEOUT_MS > parsed.data.REQUEST_TIMEOUT_MS) {
    problems.push('HEADERS_TIMEOUT_MS: must not be longer than REQUEST_TIMEOUT_MS');
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  return parsed.data;
}

/** Whether the demo workspace is loaded: by default only into the embedded database. */
export function wantsDemo(config: Config): boolean {
  return config.DEMO ?? !config.DATABASE_URL;
}

/** `DATABASE_PREPARED_STATEMENTS` as the database layer takes it. */
export function preparedStatementsSetting(config: Config): boolean | 'auto' {
  return config.DATABASE_PREPARED_STATEMENTS === 'auto' ? 'auto' : config.DATABASE_PREPARED_STATEMENTS === 'true';
}

/** The public listener's URL as the world reaches it: PUBLIC_URL, else `listening` (the listener's own), else HOST and PORT. */
export function publicBaseUrl(config: Config, listening?: string): string {
  if (config.PUBLIC_URL) return config.PUBLIC_URL;
  if (listening) return listening;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}`;
}

export type OtlpProtocol = z.infer<typeof otlpProtocol>;

/**
 * The protocol traces are exported with, or null when tracing is off: traces are exported only
 * when an OTLP endpoint is configured (the general one or the one for traces) and
 * OTEL_SDK_DISABLED is not true.
 */
export function tracesProtocol(config: Config): OtlpProtocol | null {
  if (config.OTEL_SDK_DISABLED || (!config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT && !config.OTEL_EXPORTER_OTLP_ENDPOINT)) return null;
  return config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
}
