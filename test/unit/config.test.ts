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

  it('ignores empty values and unrelated variables', () => {
    expect(loadConfig({ PORT: '', UNRELATED: 'x' }).PORT).toBe(3000);
  });

  it('decisions webhooks: the retry schedule, timeout and target rule default to the contract values', () => {
    const config = loadConfig({});
    expect(config.WEBHOOK_RETRY_DELAYS_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(config.WEBHOOK_TIMEOUT_MS).toBe(15_000);
    expect(config.WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
    expect(config.WEBHOOK_WORKER).toBe(true);
    expect(config.WEBHOOK_SECRET_KEY).toBeUndefined();
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS_MS: ' 1, 2,3,4,5,6,7 ' }).WEBHOOK_RETRY_DELAYS_MS).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('refuses a retry schedule without exactly seven delays, a malformed secret key and a stale-lock time within the lease', () => {
    let error: unknown;
    try {
      loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '1,2,3', WEBHOOK_SECRET_KEY: 'not-base64-of-32-bytes', WEBHOOK_TIMEOUT_MS: '0' });
    } catch (caught) {
      error = caught;
    }
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['WEBHOOK_RETRY_DELAYS_MS', 'WEBHOOK_SECRET_KEY', 'WEBHOOK_TIMEOUT_MS']) expect(problems).toContain(name);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '15000', WEBHOOK_STALE_LOCK_MS: '30000' })).toThrow(/WEBHOOK_STALE_LOCK_MS/);
  });
});
