import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

describeOnEachDatabase('listing statements on %s', (target) => {
  let owner: Database;
  // One connection, so that the session the API used is the one the test looks into.
  let db: Database;
  let api: TestApi;
  let seeded: SeededWorkspace;

  beforeAll(async () => {
    owner = await openTestDatabase(target);
    seeded = await seedWorkspace(owner, contractFixture('Prepared'));
    db = target === 'postgres' ? await openDatabase({ url: owner.connectionString, poolSize: 1 }) : owner;
    api = await startTestApi(db);
  });
  afterAll(async () => {
    await api?.close();
    if (db !== owner) await db?.close();
    await owner?.close();
  });

  const preparedListings = async () =>
    (await db.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements')).rows.filter((row) =>
      /FROM bookings t/.test(row.statement),
    );

  it('answers the same bodies when a statement is executed again', async () => {
    const first = await api.call('/api/public/v1/bookings', { key: seeded.fullKey });
    const second = await api.call('/api/public/v1/bookings', { key: seeded.fullKey });
    expect(first.status).toBe(200);
    expect(second.text).toBe(first.text);
  });

  // Every connection to the embedded database shares one PGlite session, where two connections'
  // statements of one name would collide.
  const expectation =
    target === 'postgres'
      ? 'prepares a listing statement once per connection and runs it by name after that'
      : 'keeps statements unnamed on the embedded database, whose connections share one session';
  it(expectation, async () => {
    for (let i = 0; i < 3; i += 1) expect((await api.call('/api/public/v1/bookings', { key: seeded.fullKey })).status).toBe(200);
    const prepared = await preparedListings();
    if (target === 'embedded') {
      expect(prepared).toEqual([]);
      return;
    }
    expect(prepared).toHaveLength(1);
    expect(prepared[0]!.name).toMatch(/^svc_\d+$/);
  });

  if (target === 'postgres') it('prepares nothing by name with DATABASE_PREPARED_STATEMENTS=false, and answers the same bodies', async () => {
    const unnamed = await openDatabase({ url: owner.connectionString, poolSize: 1, preparedStatements: false });
    const plain = await startTestApi(unnamed);
    try {
      const first = await plain.call('/api/public/v1/bookings', { key: seeded.fullKey });
      expect(first.text).toBe((await api.call('/api/public/v1/bookings', { key: seeded.fullKey })).text);
      expect((await plain.call('/api/public/v1/bookings', { key: seeded.fullKey })).status).toBe(200);
      const named = await unnamed.query<{ count: number }>('SELECT count(*)::int AS count FROM pg_prepared_statements');
      expect(named.rows[0]!.count).toBe(0);
    } finally {
      await plain.close();
      await unnamed.close();
    }
  });
});
