import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { postGraphQL, type InternalAnswer } from '../support/internal-graphql.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const PAGE = 'query Page($id: ID!) { workspace(id: $id) { bookingsConnection(first: 50) { totalCount nodes { id status courseRun { id } } } } }';
const TWO = `${PAGE} query Runs($id: ID!) { workspace(id: $id) { courseRunsConnection(first: 50) { totalCount nodes { id } } } }`;

/** Every use of a field a token's operations counted, summed over /metrics. */
async function fieldUses(internalUrl: string, token: string): Promise<number> {
  const text = await (await fetch(`${internalUrl}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('internal_graphql_field_uses_total{') && line.includes(`token="${token}"`))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

describeOnEachDatabase('refused internal requests spend nothing and count no field usage, on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  const tokens = { open: '', strict: '' };
  const url = () => api.server.internalUrl!;
  const post = (token: string, body: Record<string, unknown>) => postGraphQL(url(), token, { variables: { id: ws.workspaceId }, ...body });
  /** What is left of a token's budget, asked with a query that reads nothing from the database (and so spends nothing). */
  const remaining = async (token: string) => (await post(token, { query: '{ __typename }' })).cost!.remaining;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Refused', 30));
    api = await startTestApi(db, { INTERNAL_COST_PER_MINUTE: '100000' });
    tokens.open = (await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'open')).token;
    tokens.strict = (await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'strict', '--documents', 'trusted')).token;
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  /** Sends `body`, expects it refused with `status` and `code`, and nothing spent or counted for `name`'s token. */
  const refusedFreely = async (name: 'open' | 'strict', body: Record<string, unknown>, status: number, code: string): Promise<InternalAnswer> => {
    const token = tokens[name];
    const [left, uses] = [await remaining(token), await fieldUses(url(), name)];
    const answer = await post(token, body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(status);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe(code);
    expect(answer.body.data).toBeUndefined();
    if (answer.cost) expect(answer.cost).toMatchObject({ actual: 0, remaining: left });
    expect(await remaining(token)).toBe(left);
    expect(await fieldUses(url(), name)).toBe(uses);
    return answer;
  };

  it('the same documents, when they run, spend the database time they took and count their fields (the honest client)', async () => {
    const [left, uses] = [await remaining(tokens.open), await fieldUses(url(), 'open')];
    const answer = await post(tokens.open, { query: TWO, operationName: 'Page' });
    expect(answer.status).toBe(200);
    expect(answer.cost!.actual).toBeGreaterThanOrEqual(1);
    expect(await remaining(tokens.open)).toBe(left - answer.cost!.actual);
    expect(await fieldUses(url(), 'open')).toBeGreaterThan(uses);
  });

  it('an operation name that names no operation of the document: 400 OPERATION_RESOLUTION_FAILURE, nothing spent', async () => {
    await refusedFreely('open', { query: TWO, operationName: 'Absent' }, 400, 'OPERATION_RESOLUTION_FAILURE');
  });

  it('several operations and no operation name, or several anonymous ones: 400, nothing spent', async () => {
    const anonymous = TWO.replace('query Page', 'query').replace('query Runs', 'query');
    await refusedFreely('open', { query: anonymous }, 400, 'GRAPHQL_VALIDATION_FAILED');
    await refusedFreely('open', { query: TWO }, 400, 'OPERATION_RESOLUTION_FAILURE');
  });

  it('a validation error and variables that do not fit their types: 400, nothing spent', async () => {
    await refusedFreely('open', { query: '{ workspace(id: "x") { nope } }' }, 400, 'GRAPHQL_VALIDATION_FAILED');
    await refusedFreely('open', { query: PAGE, variables: {} }, 400, 'invalid_request');
    await refusedFreely('open', { query: PAGE, variables: { id: { nested: true } } }, 400, 'invalid_request');
  });

  it('a document refused by its token’s mode, and an unknown hash: 403 and 404, nothing spent', async () => {
    await refusedFreely('strict', { query: PAGE }, 403, 'DOCUMENT_NOT_TRUSTED');
    await refusedFreely('strict', { documentId: `sha256:${'0'.repeat(64)}` }, 404, 'PERSISTED_QUERY_NOT_FOUND');
  });

  it('a request whose estimate does not fit what is left: 429 RATE_LIMITED, nothing spent, its estimate shown', async () => {
    const probe = await post(tokens.open, { query: PAGE });
    const spent = 100_000 - probe.cost!.remaining;
    await cliOn(db).json('internal-token', 'update', '--name', 'open', '--cost-per-minute', String(spent + probe.cost!.estimate - 1));
    const refused = await refusedFreely('open', { query: PAGE }, 429, 'RATE_LIMITED');
    expect(refused.cost).toMatchObject({ estimate: probe.cost!.estimate, actual: 0 });
    await cliOn(db).json('internal-token', 'update', '--name', 'open', '--cost-per-minute', 'default');
  });
});
