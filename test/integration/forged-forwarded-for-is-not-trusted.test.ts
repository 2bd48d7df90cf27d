import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgedApiKey } from '../support/forged-credentials.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { ROOT, START_ARGUMENTS } from '../support/service-commands.ts';

const COURSES = '/api/public/v1/courses';
const LIMIT = 5;

// The client address only decides which counter a failure lands in: one database is enough.
describe('a client that writes its own X-Forwarded-For', () => {
  let db: Database;
  const apis: TestApi[] = [];

  const serve = async (trustProxy?: string) => {
    const api = await startTestApi(db, { AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW_S: '60', ...(trustProxy ? { TRUST_PROXY: trustProxy } : {}) });
    apis.push(api);
    return api;
  };
  /** The statuses of `count` forged keys, each sent with the X-Forwarded-For value `forwarded(i)` makes. */
  const attack = async (api: TestApi, count: number, forwarded: (i: number) => string) => {
    const statuses: number[] = [];
    for (let i = 0; i < count; i += 1) {
      const response = await api.call(COURSES, { headers: [['X-Forwarded-For', forwarded(i)], ['Authorization', `Bearer ${forgedApiKey()}`]] });
      if (response.status === 429) expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      statuses.push(response.status);
    }
    return statuses;
  };
  const limited = (count: number) => [...Array(LIMIT).fill(401), ...Array(count - LIMIT).fill(429)];
  const forged = (i: number) => `10.${i}.${i}.${i}`;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
  });
  afterAll(async () => {
    for (const api of apis) await api.close();
    await db?.close();
  });

  it('limits.auth-failures: without TRUST_PROXY the header is ignored: 40 forged keys with 40 different values reach the limit', async () => {
    const api = await serve();
    expect(await attack(api, 40, forged)).toEqual(limited(40));
  });

  it('limits.auth-failures: behind one proxy (TRUST_PROXY=1) only the address that proxy appended counts, whatever the client wrote before it', async () => {
    const api = await serve('1');
    expect(await attack(api, 40, (i) => `${forged(i)}, 203.0.113.10`)).toEqual(limited(40));
    // The address the proxy saw is another client: its own budget.
    expect(await attack(api, 1, () => `${forged(99)}, 203.0.113.11`)).toEqual([401]);
  });

  it('limits.auth-failures: behind two proxies (TRUST_PROXY=2) the client is the address the outer one appended', async () => {
    const api = await serve('2');
    expect(await attack(api, 12, (i) => `${forged(i)}, 203.0.113.20, 10.0.0.${i + 1}`)).toEqual(limited(12));
  });

  it('limits.auth-failures: with trusted proxy addresses (TRUST_PROXY=loopback, 10.0.0.0/8) the client is the right-most untrusted address', async () => {
    const api = await serve('loopback, 10.0.0.0/8');
    expect(await attack(api, 12, (i) => `198.51.100.${i}, 203.0.113.30, 10.9.8.${i}`)).toEqual(limited(12));
  });

  it('limits.auth-failures: IPv6 clients count per /64; an IPv4-mapped address counts as its IPv4 address', async () => {
    const api = await serve('loopback');
    expect(await attack(api, 12, (i) => `2001:db8:aa:bb::${(i + 1).toString(16)}`)).toEqual(limited(12));
    expect(await attack(api, 12, (i) => `2001:db8:aa:bb:${(i + 1).toString(16)}::1`)).toEqual(Array(12).fill(429));
    // The neighbouring /64 is someone else.
    expect(await attack(api, 1, () => '2001:db8:aa:bc::1')).toEqual([401]);
    expect(await attack(api, 6, (i) => (i % 2 === 0 ? '203.0.113.40' : '::ffff:203.0.113.40'))).toEqual(limited(6));
  });

  it('TRUST_PROXY=true is refused at start with a message that says what to set instead', async () => {
    const child = spawn(process.execPath, START_ARGUMENTS, {
      cwd: ROOT,
      env: { PATH: process.env.PATH, TRUST_PROXY: 'true', PORT: '0', INTERNAL_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(/TRUST_PROXY: true is not accepted.*X-Forwarded-For.*clients write themselves.*number of proxies.*\(e\.g\. 1\).*addresses.*loopback/);
  });
});
