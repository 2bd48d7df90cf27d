import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

// Ids in the order the import gives them, so that ties broken by id fall the same way every run.
const sequence = vi.hoisted(() => ({ next: 0 }));
vi.mock('../../src/db/ids.ts', () => ({
  newId: (prefix: string) => `${prefix}_${(sequence.next += 1).toString(16).padStart(32, '0')}`,
}));

/**
 * The public answers are fixed bytes: whatever changes inside the GraphQL layer (connections,
 * filters, restricted tokens), /courses and /bookings of the contract fixture answer exactly the
 * bytes recorded in test/fixtures/rest-v1/.
 */
const recorded = (name: string) => readFileSync(new URL(`../fixtures/rest-v1/${name}.json`, import.meta.url), 'utf8');

describeOnEachDatabase('recorded REST bodies on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    sequence.next = 0;
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Recorded'));
    api = await startTestApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it.each([
    ['/api/public/v1/courses', 'fullKey', 'courses'],
    ['/api/public/v1/bookings', 'fullKey', 'bookings-with-participants'],
    ['/api/public/v1/bookings', 'bookingsKey', 'bookings-without-participants'],
  ] as const)('%s with the %s answers exactly the recorded bytes (%s.json)', async (path, key, file) => {
    const response = await api.call(path, { key: ws[key] });
    expect(response.status).toBe(200);
    expect(response.text).toBe(recorded(file));
  });
});
