import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, wantsDemo } from '../../src/config.ts';

describe('configuration', () => {
  it('uses the contract values and safe defaults when nothing is set', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      HOST: '127.0.0.1',
      DATA_DIR: './.data',
      INTERNAL_PORT: 4001,
      INTERNAL_HOST: '127.0.0.1',
      RATE_LIMIT_STORE: 'memory',
      RATE_LIMIT_MAX: 120,
      RATE_LIMIT_WINDOW_S: 60,
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.INTERNAL_API_TOKEN).toBeUndefined();
  });

  it('reports every problem at once, naming each variable', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', RATE_LIMIT_STORE: 'redis', INTERNAL_API_TOKEN: 'short', KEY_CACHE_TTL_MS: '5000' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['PORT', 'DATABASE_URL', 'REDIS_URL', 'INTERNAL_API_TOKEN', 'KEY_CACHE_TTL_MS']) expect(problems).toContain(name);
    expect((error as ConfigError).message).toMatch(/^Invalid configuration:\n {2}- /);
  });

  it('loads the demo only into the embedded database unless DEMO says otherwise', () => {
    expect(wantsDemo(loadConfig({}))).toBe(true);
    expect(wantsDemo(loadConfig({ DATABASE_URL: 'postgresql://localhost/x' }))).toBe(false);
    expect(wantsDemo(loadConfig({ DATABASE_URL: 'postgresql://localhost/x', DEMO: 'true' }))).toBe(true);
    expect(wantsDemo(loadConfig({ DEMO: 'false' }))).toBe(false);
  });

  it('takes a direct URL for session work only beside DATABASE_URL, and prepared statements as auto, true or false', () => {
    expect(loadConfig({}).DATABASE_PREPARED_STATEMENTS).toBe('auto');
    const direct = loadConfig({ DATABASE_URL: 'postgresql://pooler:6432/x', DATABASE_DIRECT_URL: 'postgresql://db:5432/x', DATABASE_PREPARED_STATEMENTS: 'false' });
    expect(direct).toMatchObject({ DATABASE_DIRECT_URL: 'postgresql://db:5432/x', DATABASE_PREPARED_STATEMENTS: 'false' });
    expect(() => loadConfig({ DATABASE_DIRECT_URL: 'postgresql://db:5432/x' })).toThrow(/DATABASE_DIRECT_URL: needs DATABASE_URL/);
    expect(() => loadConfig({ DATABASE_URL: 'postgresql://db/x', DATABASE_PREPARED_STATEMENTS: 'sometimes' })).toThrow(/DATABASE_PREPARED_STATEMENTS/);
  });

  it('takes read replicas as a comma-separated list beside DATABASE_URL, with a lag bound of a second by default', () => {
    const config = loadConfig({ DATABASE_URL: 'postgresql://primary/x', DATABASE_REPLICA_URL: 'postgresql://r1/x, postgres://r2/x' });
    expect(config.DATABASE_REPLICA_URL).toEqual(['postgresql://r1/x', 'postgres://r2/x']);
    expect(config.DATABASE_REPLICA_MAX_LAG_MS).toBe(1000);
    expect(() => loadConfig({ DATABASE_REPLICA_URL: 'postgresql://r1/x' })).toThrow(/DATABASE_REPLICA_URL: needs DATABASE_URL/);
    expect(() => loadConfig({ DATABASE_URL: 'postgresql://primary/x', DATABASE_REPLICA_URL: 'postgresql://r1/x,mysql://r2' })).toThrow(/DATABASE_REPLICA_URL/);
  });

  it('ignores empty values and unrelated variables', () => {
    expect(loadConfig({ PORT: '', UNRELATED: 'x' }).PORT).toBe(3000);
  });

  it('webhooks.schedule: the retry schedule, timeout and target rule default to the contract values', () => {
    const config = loadConfig({});
    expect(config.WEBHOOK_RETRY_DELAYS_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(config.WEBHOOK_TIMEOUT_MS).toBe(15_000);
    expect(config.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
    expect(config.WEBHOOK_WORKER).toBe(true);
    expect(config.WEBHOOK_SECRET_KEY).toBeUndefined();
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS_MS: ' 1, 2,3,4,5,6,7 ' }).WEBHOOK_RETRY_DELAYS_MS).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('refuses a retry schedule without exactly seven delays, a malformed secret key and a zero timeout', () => {
    let error: unknown;
    try {
      loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '1,2,3', WEBHOOK_SECRET_KEY: 'not-base64-of-32-bytes', WEBHOOK_TIMEOUT_MS: '0' });
    } catch (caught) {
      error = caught;
    }
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['WEBHOOK_RETRY_DELAYS_MS', 'WEBHOOK_SECRET_KEY', 'WEBHOOK_TIMEOUT_MS']) expect(problems).toContain(name);
  });

  it('reads several webhook secret keys, newest first, fractional retention and disable days, and refuses a malformed key or a non-positive number of days', () => {
    const [a, b] = [Buffer.alloc(32, 1).toString('base64'), Buffer.alloc(32, 2).toString('base64')];
    expect(loadConfig({ WEBHOOK_SECRET_KEY: `${a}, ${b}` }).WEBHOOK_SECRET_KEY).toEqual([a, b]);
    expect(loadConfig({})).toMatchObject({ WEBHOOK_BODY_RETENTION_DAYS: 30, WEBHOOK_DISABLE_AFTER_DAYS: 5 });
    expect(loadConfig({ WEBHOOK_BODY_RETENTION_DAYS: '0.5', WEBHOOK_DISABLE_AFTER_DAYS: '0.00002' })).toMatchObject({ WEBHOOK_BODY_RETENTION_DAYS: 0.5, WEBHOOK_DISABLE_AFTER_DAYS: 0.00002 });
    let error: unknown;
    try {
      loadConfig({ WEBHOOK_SECRET_KEY: `${a},not-a-key`, WEBHOOK_BODY_RETENTION_DAYS: '0', WEBHOOK_DISABLE_AFTER_DAYS: '-1' });
    } catch (caught) {
      error = caught;
    }
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['WEBHOOK_SECRET_KEY', 'WEBHOOK_BODY_RETENTION_DAYS', 'WEBHOOK_DISABLE_AFTER_DAYS']) expect(problems).toContain(name);
  });

  it('TRUST_PROXY takes express\'s trust proxy forms and refuses true, saying what to set instead', () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8, fd00::/8, 192.0.2.7, uniquelocal' }).TRUST_PROXY).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.7', 'uniquelocal']);
    for (const value of ['true', 'TRUE', 'yes']) expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/TRUST_PROXY: true is not accepted.*\(e\.g\. 1\)/);
    expect(() => loadConfig({ TRUST_PROXY: 'loopbak, 10.0.0.0/33' })).toThrow(/"loopbak", "10\.0\.0\.0\/33" is not a hop count/);
  });

  it('PORTAL_FRAME_ANCESTORS takes origins separated by spaces or commas, none by default, and refuses a path, a wildcard, a keyword or another scheme', () => {
    expect(loadConfig({}).PORTAL_FRAME_ANCESTORS).toEqual([]);
    expect(loadConfig({ PORTAL_FRAME_ANCESTORS: 'https://dashboard.example.com, https://admin.example.com:8443  http://localhost:5173/' }).PORTAL_FRAME_ANCESTORS).toEqual([
      'https://dashboard.example.com',
      'https://admin.example.com:8443',
      'http://localhost:5173',
    ]);
    for (const value of ['https://dashboard.example.com/settings', 'https://*.example.com', "'self'", 'dashboard.example.com', 'javascript:alert(1)']) {
      expect(() => loadConfig({ PORTAL_FRAME_ANCESTORS: value }), value).toThrow(/PORTAL_FRAME_ANCESTORS: .* is not an origin such as https:\/\/dashboard\.example\.com/);
    }
  });

  it('listener timeouts and connection caps default to 10 s, 30 s and 1000, and a header timeout longer than the request timeout is refused', () => {
    expect(loadConfig({})).toMatchObject({ HEADERS_TIMEOUT_MS: 10_000, REQUEST_TIMEOUT_MS: 30_000, MAX_CONNECTIONS: 1000, RATE_LIMIT_CLEANUP_INTERVAL_S: 60 });
    expect(() => loadConfig({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000' })).toThrow(/HEADERS_TIMEOUT_MS: must not be longer than REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ MAX_CONNECTIONS: '0' })).toThrow(/MAX_CONNECTIONS/);
  });

  it('METRICS_TOKEN needs the internal listener and at least 16 characters', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'metrics-token-0123456789' })).toThrow(/METRICS_TOKEN: needs INTERNAL_API_TOKEN/);
    expect(() => loadConfig({ INTERNAL_API_TOKEN: 'internal-token-0123456789', METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
    expect(loadConfig({ INTERNAL_API_TOKEN: 'internal-token-0123456789', METRICS_TOKEN: 'metrics-token-0123456789' }).METRICS_TOKEN).toBe('metrics-token-0123456789');
  });
});

describe('RESPONSE_CACHE_MAX_BYTES', () => {
  it('defaults to 64 MiB, takes 0 to turn the response cache off, and refuses what is not a whole number of bytes', () => {
    expect(loadConfig({}).RESPONSE_CACHE_MAX_BYTES).toBe(64 * 1024 * 1024);
    expect(loadConfig({ RESPONSE_CACHE_MAX_BYTES: '0' }).RESPONSE_CACHE_MAX_BYTES).toBe(0);
    expect(loadConfig({ RESPONSE_CACHE_MAX_BYTES: '1048576' }).RESPONSE_CACHE_MAX_BYTES).toBe(1_048_576);
    for (const value of ['-1', '64MB', '1.5']) expect(() => loadConfig({ RESPONSE_CACHE_MAX_BYTES: value }), value).toThrow(/RESPONSE_CACHE_MAX_BYTES/);
  });
});
