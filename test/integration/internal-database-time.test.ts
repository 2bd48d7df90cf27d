import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { whileBusy } from '../support/busy-database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { postGraphQL } from '../support/internal-graphql.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const NAME = 'query Name($id: ID!) { workspace(id: $id) { name } }';
/** Two statements, one after the other: the bookings with their runs, then the runs' sessions. */
const NESTED = 'query Nested($id: ID!) { workspace(id: $id) { bookingsConnection(first: 5) { nodes { id courseRun { sessionsConnection(first: 2) { nodes { id } } } } } } }';

describeOnEachDatabase('the database time of one internal request on %s', (target) => {
  // The cap, INTERNAL_COST_PER_REQUEST: its statements are cancelled at its database time (400 ms on
  // PostgreSQL, whose statement timeout is raised above it). On the embedded database smaller: what
  // keeps its engine busy costs the test its time.
  const cap = target === 'postgres' ? 40_000 : 2_000;
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  const create = async (name: string, ...options: string[]) => (await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', name, ...options)).token;
  const ask = (token: string, query: string) => postGraphQL(api.server.internalUrl!, token, { query, variables: { id: ws.workspaceId } });

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Database time', 12));
    api = await startTestApi(db, { INTERNAL_COST_PER_MINUTE: '100000', INTERNAL_COST_PER_REQUEST: String(cap), INTERNAL_STATEMENT_TIMEOUT_MS: '2000' });
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('a request admitted under the cap is stopped when its statements have taken the cap’s database time, answered QUERY_TIMEOUT and charged what they took, never 1.5 caps on PostgreSQL (on the embedded engine, whose statements wait for every connection\'s, charged and answered); the same request runs when the database is free', async () => {
    const token = await create('slow');
    const stopped = await whileBusy(db, () => ask(token, NESTED));
    expect(stopped.status).toBe(200);
    if (target === 'postgres') {
      expect(stopped.body.errors?.[0]).toMatchObject({
        message: `This request's statements took the database time of the cap (${cap} points, ${cap * 0.01} ms) and were stopped; read fewer rows, filter on indexed columns or leave out totalCount.`,
        extensions: { code: 'QUERY_TIMEOUT' },
      });
    } else {
      // An honest request on a busy embedded engine is answered: its time there was mostly the other client's statement.
      expect(stopped.body.errors).toBeUndefined();
    }
    const cost = stopped.cost!;
    expect(cost.estimate).toBeLessThanOrEqual(cap);
    expect(cost.actual).toBeGreaterThanOrEqual(cap);
    if (target === 'postgres') expect(cost.actual).toBeLessThanOrEqual(cap * 1.5);
    expect(cost.remaining).toBe(100_000 - cost.actual);

    const free = await ask(token, NESTED);
    expect(free.body.errors).toBeUndefined();
    expect(free.cost!.remaining).toBe(cost.remaining - free.cost!.actual);
  });

  it('what a request costs beyond what its minute holds is owed: the next request waits for it, and it is paid before anything new is admitted', async () => {
    // A budget of half a cap: the request runs to it, is stopped (on PostgreSQL), and owes what its statements took past it.
    const budget = cap / 2;
    const token = await create('owing', '--cost-per-minute', String(budget));
    const stopped = await whileBusy(db, () => ask(token, NESTED));
    // PostgreSQL stops it at its budget's time; the embedded engine charges it all (see above).
    expect(stopped.body.errors?.[0]?.extensions?.code).toBe(target === 'postgres' ? 'QUERY_TIMEOUT' : undefined);
    const owed = stopped.cost!.actual - budget;
    expect(stopped.cost).toMatchObject({ budget, remaining: Math.max(0, -owed) });
    // The embedded engine charges it all, so it owes for certain. PostgreSQL owes what its statements
    // took while being cancelled, which a cancel that lands at once (within a fifth of a millisecond)
    // makes nothing: then there is no debt to see, and the embedded variant has shown it.
    if (target === 'embedded') expect(owed).toBeGreaterThan(0);
    else expect(owed).toBeGreaterThanOrEqual(-20);
    if (owed <= 0) return;
    expect(stopped.cost!.resetSeconds).toBeGreaterThan(60);

    const waiting = await ask(token, NAME);
    expect(waiting.status).toBe(429);
    expect(waiting.body.errors?.[0]).toEqual({ message: expect.stringContaining(`(${owed} more are owed: requests that cost more than their minute held)`), extensions: { code: 'RATE_LIMITED' } });
    expect(Number(waiting.headers.get('retry-after'))).toBeGreaterThan(60);
    expect(waiting.cost).toMatchObject({ actual: 0, remaining: 0 });

    // A larger budget admits it, once what is owed is paid from this minute.
    await cliOn(db).json('internal-token', 'update', '--name', 'owing', '--cost-per-minute', '100000');
    const next = await ask(token, NAME);
    expect(next.status).toBe(200);
    expect(next.cost!.remaining).toBe(100_000 - stopped.cost!.actual - next.cost!.actual);
    expect(next.cost!.resetSeconds).toBeLessThanOrEqual(60);
  });
});
