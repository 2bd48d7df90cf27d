import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { metricValue, postGraphQL, type InternalAnswer } from '../support/internal-graphql.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { REDIS_SERVER, ThrowawayRedis } from '../support/throwaway-redis.ts';
import { whileBusy } from '../support/busy-database.ts';
import { DATABASE_TARGETS, LIMITER_STORES, describeOnEachStore, describeWhere, type DatabaseTarget, type LimiterStore } from '../support/variants.ts';

const NAME = 'query Name($id: ID!) { workspace(id: $id) { name } }';
const PAGE = 'query Page($id: ID!) { workspace(id: $id) { bookingsConnection(first: 10) { nodes { id status } } } }';

/** The service's default budget, set as the tests' harness lifts it elsewhere. */
const storeEnv = (store: LimiterStore) => ({ RATE_LIMIT_STORE: store, INTERNAL_COST_PER_MINUTE: '100000', ...(store === 'redis' ? { REDIS_URL: process.env.REDIS_URL! } : {}) });

/**
 * The budget an answer reports, by its headers and its `extensions.cost`, which must agree; the
 * budget is whole again within `minutes` (more than one while points are owed).
 */
function budgetOf(answer: InternalAnswer, minutes = 1) {
  const policy = /^"cost";q=(\d+);w=60$/.exec(answer.headers.get('ratelimit-policy') ?? '');
  const state = /^"cost";r=(\d+);t=(\d+)$/.exec(answer.headers.get('ratelimit') ?? '');
  expect(policy, `RateLimit-Policy of ${JSON.stringify(answer.body)}`).not.toBeNull();
  expect(state, `RateLimit of ${JSON.stringify(answer.body)}`).not.toBeNull();
  expect(answer.cost).toEqual({ estimate: expect.any(Number), actual: expect.any(Number), budget: Number(policy![1]), remaining: Number(state![1]), resetSeconds: Number(state![2]) });
  expect(answer.cost!.resetSeconds).toBeLessThanOrEqual(60 * minutes);
  return answer.cost!;
}

/**
 * Every store on the embedded database; on a real PostgreSQL the store that lives in it (the other
 * stores keep nothing there, and the public limit's tests run them on both).
 */
const SINGLE_INSTANCE: Array<[DatabaseTarget, readonly LimiterStore[]]> = [
  ['embedded', LIMITER_STORES],
  ['postgres', ['postgres']],
];

for (const [onTarget, stores] of SINGLE_INSTANCE) describeOnEachStore([onTarget], stores, 'cost budgets of internal tokens on %s with the %s store', (target, store) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  const create = async (name: string, ...options: string[]) =>
    (await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', `${name}-${store}`, ...options)).token;
  const ask = (token: string, query: string, server: TestApi = api) => postGraphQL(server.server.internalUrl!, token, { query, variables: { id: ws.workspaceId } });

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture(`Budget ${store}`, 12));
    api = await startTestApi(db, storeEnv(store));
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('every answer carries its estimate and its charge, the database time its statements took, in extensions.cost and the RateLimit headers; what is left follows the charges', async () => {
    const token = await create('reporting');
    const first = await ask(token, PAGE);
    expect(first.status).toBe(200);
    const page = budgetOf(first);
    expect(page.estimate).toBeGreaterThan(15);
    expect(page.actual).toBeGreaterThanOrEqual(1);
    expect(page).toMatchObject({ budget: 100_000, remaining: 100_000 - page.actual });

    const second = budgetOf(await ask(token, NAME));
    expect(second.actual).toBeGreaterThanOrEqual(1);
    expect(second.remaining).toBe(page.remaining - second.actual);
    // Refused before it ran, and a query that reads nothing from the database: nothing spent.
    const invalid = await ask(token, '{ workspace(id: "x") { nope } }');
    expect(invalid.status).toBe(400);
    expect(budgetOf(invalid)).toMatchObject({ estimate: 0, actual: 0, remaining: second.remaining });
    expect(budgetOf(await ask(token, '{ __typename }'))).toMatchObject({ estimate: 0, actual: 0, remaining: second.remaining });
    // The bootstrap token has a budget of its own, the default.
    expect(budgetOf(await ask(INTERNAL_TOKEN, NAME))).toMatchObject({ budget: 100_000 });
  });

  it('a request is admitted by its estimate: one that does not fit what is left gets 429 RATE_LIMITED with Retry-After and spends nothing; a query that fits runs; a changed budget applies at once', async () => {
    const token = await create('dashboard');
    const first = budgetOf(await ask(token, PAGE));
    const spent = 100_000 - first.remaining;
    // What is left becomes one point less than the page's estimate.
    const budget = spent + first.estimate - 1;
    await cliOn(db).json('internal-token', 'update', '--name', `dashboard-${store}`, '--cost-per-minute', String(budget));
    const rejectionsBefore = await metricValue(api.server.internalUrl!, 'rate_limit_rejections_total', { limiter: 'internal_cost' });

    const refused = await ask(token, PAGE);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ errors: [{ message: expect.stringContaining('retry after'), extensions: { code: 'RATE_LIMITED' } }] });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(budgetOf(refused)).toMatchObject({ estimate: first.estimate, actual: 0, budget, remaining: first.estimate - 1 });
    expect(await metricValue(api.server.internalUrl!, 'rate_limit_rejections_total', { limiter: 'internal_cost' })).toBe(rejectionsBefore + 1);

    // It may cost more than what is left: the rest is then owed, for as many minutes as this budget takes to pay it.
    const name = budgetOf(await ask(token, NAME), Number.POSITIVE_INFINITY);
    expect(name.estimate).toBeLessThan(first.estimate - 1);
    expect(name).toMatchObject({ remaining: Math.max(0, first.estimate - 1 - name.actual) });

    const updated = await cliOn(db).json('internal-token', 'update', '--name', `dashboard-${store}`, '--cost-per-minute', 'default');
    expect(updated).toMatchObject({ costPerMinute: null });
    const raised = await ask(token, PAGE);
    expect(raised.status).toBe(200);
    expect(budgetOf(raised).budget).toBe(100_000);
  });

  it('a query whose estimate is more than the whole budget is refused with 400 invalid_request, not asked to wait', async () => {
    const token = await create('tiny', '--cost-per-minute', '5');
    const answer = await ask(token, PAGE);
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([{ message: expect.stringMatching(/^Query cost \d+ exceeds this token's whole budget of 5 per minute/), extensions: { code: 'invalid_request' } }]);
    expect(answer.headers.get('retry-after')).toBeNull();
    expect(budgetOf(answer)).toMatchObject({ budget: 5, remaining: 5, actual: 0 });
  });
});

describeOnEachStore(DATABASE_TARGETS, ['postgres', 'redis'], 'two instances on %s sharing the %s rate-limit store', (target, store) => {
  // The cap, INTERNAL_COST_PER_REQUEST: what a minute's requests may spend past the budget while being
  // cancelled; on the embedded database smaller: what keeps its engine busy costs the test its time.
  const cap = target === 'postgres' ? 40_000 : 2_000;
  let db: Database;
  let one: TestApi;
  let two: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture(`Shared budget ${store}`, 4));
    const env = { ...storeEnv(store), INTERNAL_COST_PER_REQUEST: String(cap), INTERNAL_STATEMENT_TIMEOUT_MS: '2000' };
    [one, two] = await Promise.all([startTestApi(db, env), startTestApi(db, env)]);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await db?.close();
  });

  it('a budget spent on one instance is spent on the other: both settle into it, both refuse what does not fit, and both report what is left', async () => {
    const ask = (server: TestApi, token: string) => postGraphQL(server.server.internalUrl!, token, { query: PAGE, variables: { id: ws.workspaceId } });
    const { token } = await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', `shared-${store}`);
    const first = budgetOf(await ask(one, token));
    const second = budgetOf(await ask(two, token));
    expect(second.remaining).toBe(first.remaining - second.actual);
    const spent = 100_000 - second.remaining;
    await cliOn(db).json('internal-token', 'update', '--name', `shared-${store}`, '--cost-per-minute', String(spent + second.estimate - 1));
    for (const server of [one, two]) {
      const refused = await ask(server, token);
      expect(refused.status).toBe(429);
      expect(refused.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
      expect(budgetOf(refused)).toMatchObject({ actual: 0, remaining: second.estimate - 1 });
    }
  });

  it('eight costly requests at once under one token, on both instances, spend at most the budget and one cap in the minute; what they spent past the budget is owed on both; an honest token is not refused meanwhile', async () => {
    const nested = 'query ($id: ID!) { workspace(id: $id) { bookingsConnection(first: 5) { nodes { id courseRun { sessionsConnection(first: 2) { nodes { id } } } } } } }';
    const ask = (server: TestApi, token: string, query: string) => postGraphQL(server.server.internalUrl!, token, { query, variables: { id: ws.workspaceId } });
    const budget = 2 * cap;
    const { token } = await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', `burst-${store}`, '--cost-per-minute', String(budget));
    const { token: honest } = await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', `honest-${store}`);
    const [burst, others] = await whileBusy(db, () =>
      Promise.all([Promise.all([one, two, one, two, one, two, one, two].map((server) => ask(server, token, nested))), Promise.all([one, two, one, two].map((server) => ask(server, honest, NAME)))]),
    );
    for (const answer of others) expect(answer).toMatchObject({ status: 200, body: { data: { workspace: { name: expect.any(String) } } } });
    // Admitted while what was spent and lent left room for their estimates; the others refused.
    const admitted = burst.filter((answer) => answer.status === 200);
    expect(burst.every((answer) => answer.status === 200 || answer.body.errors?.[0]?.extensions?.code === 'RATE_LIMITED')).toBe(true);
    // PostgreSQL stops the statements of those that ran past what was left; the embedded engine,
    // whose statements' time is mostly the others' (docs/internal-graphql.md, Bulkhead), stops none
    // and charges each what it took.
    expect(admitted.some((answer) => answer.body.errors?.[0]?.extensions?.code === 'QUERY_TIMEOUT')).toBe(target === 'postgres');
    const spent = admitted.reduce((sum, answer) => sum + answer.cost!.actual, 0);
    if (target === 'postgres') expect(spent).toBeLessThanOrEqual(budget + cap);
    // What was spent past the budget is owed, the same on both instances.
    const owed = Math.max(0, spent - budget);
    for (const server of [one, two]) {
      const after = await ask(server, token, NAME);
      if (owed > 0) expect(after.body.errors?.[0]?.message).toContain(`(${owed} more are owed: requests that cost more than their minute held)`);
      else expect(after.cost!.remaining).toBeLessThanOrEqual(budget - spent);
    }
  });
});

describeWhere(REDIS_SERVER ? null : 'redis-server not installed', 'cost budgets while the Redis store is unreachable', () => {
  let db: Database;
  let redis: ThrowawayRedis;
  let api: TestApi;
  let ws: SeededWorkspace;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    ws = await seedWorkspace(db, contractFixture('Redis outage', 4));
    redis = await ThrowawayRedis.start();
    api = await startTestApi(db, { RATE_LIMIT_STORE: 'redis', REDIS_URL: redis.url, INTERNAL_COST_PER_MINUTE: '100000' });
  });
  afterAll(async () => {
    await api?.close();
    await redis?.kill();
    await db?.close();
  });

  it('each instance goes on limiting on its own, as the public limit does (the insurance limiter): no answer fails for it', async () => {
    const ask = (token: string) => postGraphQL(api.server.internalUrl!, token, { query: PAGE, variables: { id: ws.workspaceId } });
    const { token } = await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'outage');
    const before = budgetOf(await ask(token));
    expect(before.remaining).toBe(100_000 - before.actual);
    await redis.kill();
    // Counted afresh in this process's memory: at most one more budget per instance until Redis answers again.
    const during = budgetOf(await ask(token));
    expect(during.remaining).toBe(100_000 - during.actual);
    const next = budgetOf(await ask(token));
    expect(next.remaining).toBe(during.remaining - next.actual);
    await cliOn(db).json('internal-token', 'update', '--name', 'outage', '--cost-per-minute', String(100_000 - next.remaining + next.estimate - 1));
    const refused = await ask(token);
    expect(refused.status).toBe(429);
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    // The public per-key limit, in the same store, goes on the same way.
    const courses = await api.call('/api/public/v1/courses', { key: ws.fullKey });
    expect(courses.status).toBe(200);
    expect(courses.headers.ratelimit).toMatch(/^"default";r=119;t=\d+$/);
  });
});
