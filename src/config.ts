import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');
const port = z.coerce.number().int().min(0).max(65535);
const positiveInt = z.coerce.number().int().positive();

/** The contract's schedule (decisions: webhooks): the wait after each of the first seven failures. */
export const DEFAULT_RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

const retryDelays = z
  .string()
  .regex(/^\s*\d+(\s*,\s*\d+){6}\s*$/, 'must be seven comma-separated delays in milliseconds')
  .transform((value) => value.split(',').map((delay) => Number.parseInt(delay.trim(), 10)));

const encryptionKey = z
  .string()
  .refine((value) => /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === 32, 'must be base64 of 32 bytes');

/** Every environment variable the service reads, with its default (README: Configuration). */
export const configSchema = z
  .object({
    PORT: port.default(3000),
    HOST: z.string().min(1).default('127.0.0.1'),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    DATA_DIR: z.string().min(1).default('./.data'),
    DEMO: bool.optional(),
    DB_POOL_SIZE: positiveInt.max(200).default(10),
    DB_STATEMENT_TIMEOUT_MS: positiveInt.default(5000),
    INTERNAL_PORT: port.default(4001),
    INTERNAL_HOST: z.string().min(1).default('127.0.0.1'),
    INTERNAL_API_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
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
    KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(1000).default(500),
    KEY_LAST_USED_FLUSH_MS: z.coerce.number().int().min(0).default(5000),
    SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
    TRUST_PROXY: bool.default(false),
    WEBHOOK_WORKER: bool.default(true),
    WEBHOOK_CONCURRENCY: positiveInt.max(100).default(5),
    WEBHOOK_POLL_INTERVAL_MS: positiveInt.optional(),
    WEBHOOK_RETRY_DELAYS_MS: retryDelays.default(DEFAULT_RETRY_DELAYS_MS),
    WEBHOOK_TIMEOUT_MS: positiveInt.max(60_000).default(15_000),
    WEBHOOK_STALE_LOCK_MS: positiveInt.default(60_000),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: bool.default(false),
    WEBHOOK_SECRET_KEY: encryptionKey.optional(),
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
  // A live worker holds a delivery for at most twice the timeout (its lease) plus the time a job may
  // wait in its local queue; only locks older than that can belong to a dead worker.
  if (parsed.success && parsed.data.WEBHOOK_STALE_LOCK_MS < 2 * parsed.data.WEBHOOK_TIMEOUT_MS + 1000) {
    problems.push('WEBHOOK_STALE_LOCK_MS: must be at least twice WEBHOOK_TIMEOUT_MS plus 1000');
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);
  return parsed.data;
}

/** Whether the demo workspace is loaded: by default only into the embedded database. */
export function wantsDemo(config: Config): boolean {
  return config.DEMO ?? !config.DATABASE_URL;
}
