import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { postGraphQL, type InternalAnswer } from '../support/internal-graphql.ts';
import { addBookings } from '../support/many-bookings.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const MARKDOWN = readFileSync(new URL('../../docs/internal-graphql.md', import.meta.url), 'utf8');

/** Bookings of the large workspace: enough that what a count or a scan reads dwarfs a page. */
const BOOKINGS = 30_000;

const page = (filter = '', extra = '') =>
  `query ($id: ID!) { workspace(id: $id) { bookingsConnection(first: 10${filter ? `, filter: { ${filter} }` : ''}) { ${extra} nodes { id status } } } }`;
const counts = (n: number) =>
  `query ($id: ID!) { workspace(id: $id) { ${Array.from({ length: n }, (_, i) => `c${i}: bookingsConnection(first: 1, filter: { updatedAt: { lt: "2030-01-01T00:00:${String(i).padStart(2, '0')}Z" } }) { totalCount }`).join(' ')} } }`;

describeOnEachDatabase('internal GraphQL budgets in units of database work, on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let token: string;
  const ask = (query: string, as: string, variables: Record<string, unknown> = { id: ws.workspaceId }): Promise<InternalAnswer> =>
    postGraphQL(api.server.internalUrl!, as, { query, variables });

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Units', 6));
    await addBookings(db, ws.workspaceId, BOOKINGS);
    // Started after ANALYZE: the table sizes are read from PostgreSQL's statistics at start.
    api = await startTestApi(db);
    token = (await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'units')).token;
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('an estimate prices a page by its rows, and totalCount and a filter no index serves by the rows they can read (the catalog’s indexes, PostgreSQL’s statistics)', async () => {
    const estimate = async (query: string) => {
      const answer = await ask(query, token);
      expect(answer.body.errors, query).toBeUndefined();
      return answer.cost!.estimate;
    };
    const plain = await estimate(page());
    expect(plain).toBeLessThan(100);
    // A range on the order's first column: bookings_workspace_created serves it.
    expect(await estimate(page('createdAt: { gte: "2026-01-05T00:00:00Z" }'))).toBe(plain);
    // The rows a count or a scan can read: every booking of the workspace, at 0.05 point each.
    const read = BOOKINGS * 0.05;
    expect(await estimate(page('updatedAt: { lt: "2030-01-01T00:00:00Z" }'))).toBeGreaterThanOrEqual(plain + read * 0.95);
    expect(await estimate(page('status: { in: [CONFIRMED] }'))).toBeGreaterThanOrEqual(plain + read * 0.95);
    expect(await estimate(page('', 'totalCount'))).toBeGreaterThanOrEqual(plain + read * 0.95);
    // A run's bookings in their order: bookings_course_run_created serves it, whatever the table holds.
    const run = await ask('query ($id: ID!) { courseRun(id: $id) { bookingsConnection(first: 10) { nodes { id } } } }', token, { id: ws.ids.r1 });
    expect(run.body.errors).toBeUndefined();
    expect(run.cost!.estimate).toBeLessThan(100);
  });

  it('a request whose reads exceed what one request may read is refused before anything runs, naming the column no index serves and the counts', async () => {
    const statements = await captureStatements(db, async () => {
      const refused = await ask(counts(15), token);
      expect(refused.status).toBe(400);
      const message = refused.body.errors?.[0]?.message ?? '';
      expect(refused.body.errors?.[0]?.extensions?.code).toBe('invalid_request');
      expect(message).toMatch(/^Query cost \d+ exceeds the limit of 20000 points \(200 ms of database time\): /);
      expect(message).toContain('to filter on updatedAt (bookings.updated_at), which no index of bookings serves after workspace_id');
      expect(message).toContain('totalCount of Workspace.bookingsConnection counts up to');
      expect(message).toContain('15 times');
      expect(message).toMatch(/; read fewer rows, filter on indexed columns or leave out totalCount\.$/);
      // The page quotes the message's form, and one for these counts on its own data.
      expect(MARKDOWN).toContain('`Query cost <n> exceeds the limit of 20000 points (200 ms of database time): <the reads that make it>; read fewer rows, filter on indexed columns or leave out totalCount.`');
      // Each read the page's example names is one this answer names, on 60,000 bookings instead of these.
      const reads = message.slice(message.indexOf(': ') + 2, message.lastIndexOf('; read fewer')).split('; ').map((read) => read.replace(/ \(\d+ points\)$/, '').replace(/up to [\d,]+ rows/, 'up to 60,000 rows'));
      for (const read of reads) expect(MARKDOWN).toContain(read);
    });
    // The token's lookup only.
    expect(statements).toHaveLength(1);
    const fewer = await ask(counts(3), token);
    expect(fewer.body.errors).toBeUndefined();
    expect(fewer.cost!.estimate).toBeLessThanOrEqual(20_000);
  });

  it('an estimate kept for a document is kept for its variables: the same document refused with others, served again with its own', async () => {
    const count = (alias: string, i: number, include = '') =>
      `${alias}${i}: bookingsConnection(first: 1, filter: { updatedAt: { lt: "2030-01-01T00:00:${String(i).padStart(2, '0')}Z" } })${include} { totalCount }`;
    const many = Array.from({ length: 14 }, (_, i) => count('d', i + 1, ' @include(if: $all)')).join(' ');
    const query = `query ($id: ID!, $all: Boolean!) { workspace(id: $id) { ${count('c', 0)} ${many} } }`;
    const honest = await ask(query, token, { id: ws.workspaceId, all: false });
    expect(honest.body.errors).toBeUndefined();
    const again = await ask(query, token, { id: ws.workspaceId, all: false });
    expect(again.body.errors).toBeUndefined();
    expect(again.cost!.estimate).toBe(honest.cost!.estimate);
    const refused = await ask(query, token, { id: ws.workspaceId, all: true });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]?.message).toMatch(/^Query cost \d+ exceeds the limit of 20000 points/);
    const served = await ask(query, token, { id: ws.workspaceId, all: false });
    expect(served.body.errors).toBeUndefined();
    expect(served.cost!.estimate).toBe(honest.cost!.estimate);
  });

  it('each request is charged the database time its statements took; what is left follows the charges, not the estimates', async () => {
    const { token: metered } = await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'metered', '--cost-per-minute', '1000000');
    let charged = 0;
    let estimated = 0;
    let last: InternalAnswer | undefined;
    for (const query of [page(), page('updatedAt: { lt: "2030-01-01T00:00:00Z" }'), page('', 'totalCount'), counts(2)]) {
      last = await ask(query, metered);
      expect(last.body.errors).toBeUndefined();
      expect(last.cost!.actual).toBeGreaterThanOrEqual(1);
      charged += last.cost!.actual;
      estimated += last.cost!.estimate;
    }
    expect(last!.cost!.remaining).toBe(1_000_000 - charged);
    expect(charged).not.toBe(estimated);
  });

  it('the database time a token spends in a minute is bounded by its budget: it runs until the next estimate does not fit, then 429', async () => {
    const budget = 2_000;
    const { token: small } = await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'small', '--cost-per-minute', String(budget));
    const count = page('', 'totalCount');
    let charged = 0;
    let largest = 0;
    let refused: InternalAnswer | undefined;
    for (let i = 0; i < 50 && !refused; i += 1) {
      const answer = await ask(count, small);
      if (answer.status === 429) refused = answer;
      else {
        expect(answer.status).toBe(200);
        charged += answer.cost!.actual;
        largest = Math.max(largest, answer.cost!.actual);
      }
    }
    expect(refused?.body.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
    // Every request was admitted within the budget; the last one admitted may overrun it by what it took.
    expect(charged).toBeLessThanOrEqual(budget + largest);
    expect(refused!.cost!.remaining).toBe(Math.max(0, budget - charged));
  });
});
