import { beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { rawRequest } from '../support/http.ts';
import { type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

describeOnEachDatabase('a /readyz flood on %s', (target) => {
  let db: Database;
  let api: TestApi;

  beforeAll(async () => {
    ({ db, api } = await sharedTestApi(target));
  });

  it('500 concurrent /readyz requests are answered from one database check a second', async () => {
    // The previous answer is let go first, so that the burst meets a fresh check.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    let statuses: number[] = [];
    const started = Date.now();
    const statements = await captureStatements(db, async () => {
      statuses = (await Promise.all(Array.from({ length: 500 }, () => rawRequest(api.url, '/readyz')))).map((response) => response.status);
    });
    expect(new Set(statuses)).toEqual(new Set([200]));
    // One check, or one more per further second a busy machine takes to answer them all.
    expect(statements.length).toBeLessThanOrEqual(Math.floor((Date.now() - started) / 1000) + 1);
  });

  it('a steady stream of /readyz requests asks the database at most once per second', async () => {
    let answered = 0;
    const started = Date.now();
    const statements = await captureStatements(db, async () => {
      while (Date.now() - started < 2500) {
        const batch = await Promise.all(Array.from({ length: 20 }, () => rawRequest(api.url, '/readyz')));
        answered += batch.filter((response) => response.status === 200).length;
      }
    });
    const seconds = (Date.now() - started) / 1000;
    expect(answered).toBeGreaterThan(100);
    // Checks at least a second apart: at most 3 in 2.5 s, whatever the number of requests.
    expect(statements.length).toBeLessThanOrEqual(Math.floor(seconds) + 1);
    expect(statements.every((text) => /schema_migrations/.test(text))).toBe(true);
  });

  it('the answer still follows the database within a second: a pending migration turns it to 503', async () => {
    expect((await api.call('/readyz')).status).toBe(200);
    const last = (await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY run_on DESC, id DESC LIMIT 1')).rows[0]!.name;
    await db.query('UPDATE schema_migrations SET name = $1 WHERE name = $2', [`${last}-renamed`, last]);
    const changed = Date.now();
    try {
      await expect.poll(async () => (await api.call('/readyz')).status, { timeout: 3000, interval: 50 }).toBe(503);
      expect(Date.now() - changed).toBeLessThan(1000 + 500);
    } finally {
      await db.query('UPDATE schema_migrations SET name = $1 WHERE name = $2', [last, `${last}-renamed`]);
    }
  });
});
