import { afterEach, beforeAll, beforeEach, expect, it, vi, type MockInstance } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { encodeCursor } from '../../src/loaders/cursor.ts';
import { rawRequest } from '../support/http.ts';
import { INTERNAL_TOKEN, type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { captureStatements } from '../support/statements.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

interface Answer {
  status: number;
  contentType: string;
  text: string;
  body: { errors?: Array<{ message: string; extensions?: { code?: string } }>; error?: { code: string; message: string }; data?: unknown };
}

/** What Express's default error page or a leaked error would show. */
const INTERNALS = /<html|<pre>|node_modules|\.[jt]s:\d|\n\s+at |RangeError|SyntaxError|PayloadTooLargeError|SELECT |internal_error/;

const PAGE = `query($id: ID!, $after: String) { workspace(id: $id) { bookingsConnection(first: 2, after: $after) { nodes { id } } } }`;

async function send(url: string, path: string, init: { method?: string; body?: string | Buffer; contentType?: string; token?: string | null } = {}): Promise<Answer> {
  const headers: Array<[string, string]> = [];
  if (init.contentType) headers.push(['Content-Type', init.contentType]);
  if (init.token !== null) headers.push(['Authorization', `Bearer ${init.token ?? INTERNAL_TOKEN}`]);
  const response = await rawRequest(url, path, { method: init.method ?? 'POST', headers, ...(init.body !== undefined ? { body: init.body } : {}) });
  return { status: response.status, contentType: response.headers['content-type'] ?? '', text: response.text, body: response.body as Answer['body'] };
}

const graphqlBody = (query: string, variables: Record<string, unknown> = {}) => JSON.stringify({ query, variables });

/** A refusal: a 4xx JSON answer whose first error carries `code`, without internals. */
function expectRefused(answer: Answer, status: number, code: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.contentType).toBe('application/json; charset=utf-8');
  expect(answer.body.errors?.[0]?.extensions?.code ?? answer.body.error?.code, answer.text).toBe(code);
  expect(answer.text).not.toMatch(INTERNALS);
}

describeOnEachDatabase('hostile documents and bodies on the internal listener (%s)', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let printed: MockInstance[];

  const internal = (path: string, init: Parameters<typeof send>[2] = {}) => send(api.server.internalUrl!, path, init);
  const post = (query: string, variables: Record<string, unknown> = {}) => internal('/graphql', { contentType: 'application/json', body: graphqlBody(query, variables) });
  /** The answer, and how many statements the database received while it was made. */
  const postCounting = async (query: string, variables: Record<string, unknown> = {}) => {
    let answer: Answer | undefined;
    const statements = await captureStatements(db, async () => {
      answer = await post(query, variables);
    });
    return { answer: answer!, statements: statements.length };
  };

  beforeAll(async () => {
    ({ db, api } = await sharedTestApi(target));
    ws = await seedWorkspace(db, contractFixture('Hostile', 5));
  });

  // Nothing the server does may reach the console: every line it writes goes to the JSON log.
  beforeEach(() => {
    printed = [
      vi.spyOn(process.stdout, 'write'),
      vi.spyOn(process.stderr, 'write'),
      ...(['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((method) => vi.spyOn(console, method)),
    ];
  });
  afterEach(() => {
    const calls = printed.flatMap((spy) => spy.mock.calls.map((call) => String(call[0])));
    for (const spy of printed) spy.mockRestore();
    expect(calls).toEqual([]);
  });

  it('a fragment cycle is refused with 400 GRAPHQL_VALIDATION_FAILED before anything runs, and nothing is printed outside the JSON log', async () => {
    const { answer, statements } = await postCounting('fragment A on Query { ...B } fragment B on Query { ...A } query { ...A }');
    expectRefused(answer, 400, 'GRAPHQL_VALIDATION_FAILED');
    expect(answer.body.errors?.[0]?.message).toBe('Cannot spread fragment "A" within itself via "B".');
    expect(statements).toBe(0);
  });

  it.each([
    ['a 13th month, a 45th day and a 99th hour', '2026-13-45 99:99:99'],
    ['the year 0000', '0000-01-01 00:00:00'],
    ['February 30th', '2026-02-30 10:00:00'],
  ])('a cursor with a right checksum whose timestamp no list ever wrote (%s) is refused with 400 invalid_request before any statement', async (_what, timestamp) => {
    const forged = encodeCursor('Workspace.bookings', [timestamp, ws.ids.b1]);
    const { answer, statements } = await postCounting(PAGE, { id: ws.workspaceId, after: forged });
    expectRefused(answer, 400, 'invalid_request');
    expect(answer.body.errors?.[0]?.message).toBe('Argument "after" is not a cursor of this list; use a cursor this list returned.');
    expect(statements).toBe(0);
  });

  it('a cursor with a right checksum whose id holds U+0000 is refused with 400 invalid_request before any statement', async () => {
    const forged = encodeCursor('Workspace.bookings', ['2026-07-01 00:01:00', 'bkg_\u0000']);
    const { answer, statements } = await postCounting(PAGE, { id: ws.workspaceId, after: forged });
    expectRefused(answer, 400, 'invalid_request');
    expect(statements).toBe(0);
  });

  it('an operation name that names no operation of the document (an anonymous one, an empty name) is refused with 400 OPERATION_RESOLUTION_FAILURE, not an internal error', async () => {
    for (const operationName of ['', 'Workspace']) {
      const answer = await internal('/graphql', {
        contentType: 'application/json',
        body: JSON.stringify({ query: `{ workspace(id: "${ws.workspaceId}") { id } }`, operationName }),
      });
      expectRefused(answer, 400, 'OPERATION_RESOLUTION_FAILURE');
    }
    const named = await internal('/graphql', {
      contentType: 'application/json',
      body: JSON.stringify({ query: `query A { workspace(id: "${ws.workspaceId}") { id } } query B { workspace(id: "${ws.workspaceId}") { id } }`, operationName: 'B' }),
    });
    expect(named.status).toBe(200);
  });

  it('an argument holding U+0000 and a DateTime no database holds (year 0000, February 30th) are refused with a 400 before any statement', async () => {
    const nul = await postCounting('query($id: ID!) { workspace(id: $id) { id } }', { id: 'ws_\u0000' });
    expectRefused(nul.answer, 400, 'invalid_request');
    expect(nul.answer.body.errors?.[0]?.message).toBe('Argument "id" holds the character U+0000, which no stored value holds.');
    const inFilter = await postCounting('query($id: ID!, $run: ID!) { workspace(id: $id) { bookingsConnection(filter: { courseRunId: { in: ["x", $run] } }) { nodes { id } } } }', {
      id: ws.workspaceId,
      run: 'run_\u0000',
    });
    expectRefused(inFilter.answer, 400, 'invalid_request');
    for (const instant of ['0000-01-01T00:00:00Z', '2026-02-30T00:00:00Z', '9999-12-31T23:00:00-02:00']) {
      const literal = await postCounting(`query($id: ID!) { workspace(id: $id) { bookingsConnection(filter: { createdAt: { gte: "${instant}" } }) { nodes { id } } } }`, { id: ws.workspaceId });
      expectRefused(literal.answer, 400, 'GRAPHQL_VALIDATION_FAILED');
      const variable = await postCounting('query($id: ID!, $at: DateTime!) { workspace(id: $id) { bookingsConnection(filter: { createdAt: { lt: $at } }) { nodes { id } } } }', { id: ws.workspaceId, at: instant });
      expectRefused(variable.answer, 400, 'invalid_request');
      expect(literal.statements + variable.statements).toBe(0);
    }
    expect(nul.statements + inFilter.statements).toBe(0);
  });

  it('more than 15 aliases are refused: 500 aliases of __schema { types { fields { args { name } } } } and 16 of it', async () => {
    const aliased = (count: number) => `{ ${Array.from({ length: count }, (_, i) => `a${i}: __schema { types { fields { args { name } } } }`).join(' ')} }`;
    const many = await post(aliased(500));
    // 500 aliases are over the token limit before the alias rule counts them.
    expectRefused(many, 400, 'GRAPHQL_PARSE_FAILED');
    expect(many.body.errors?.[0]?.message).toBe('Syntax Error: Document contains more that 1000 tokens. Parsing aborted.');
    const sixteen = await post(aliased(16));
    expectRefused(sixteen, 400, 'GRAPHQL_VALIDATION_FAILED');
    expect(sixteen.body.errors?.[0]?.message).toBe('Aliases limit of 15 exceeded, found 16.');
    const fifteenTypenames = await post(`{ ${Array.from({ length: 15 }, (_, i) => `t${i}: __typename`).join(' ')} }`);
    expect(fifteenTypenames.status).toBe(200);
  });

  it('introspection counts in the size: 15 aliased listings of every type with its fields are refused with the size message, one is answered', async () => {
    const listing = `__schema { types { name kind description fields { name description isDeprecated deprecationReason args { name description defaultValue type { name kind } } type { name kind ofType { name kind } } } inputFields { name description defaultValue type { name kind } } enumValues { name description } } }`;
    const fifteen = await post(`{ ${Array.from({ length: 15 }, (_, i) => `l${i}: ${listing}`).join(' ')} }`);
    expectRefused(fifteen, 400, 'invalid_request');
    expect(fifteen.body.errors?.[0]?.message).toMatch(/^Query size \d+ exceeds the limit of 20000; select fewer fields or lower "first"\.$/);
    const one = await post(`{ ${listing} }`);
    expect(one.status).toBe(200);
    expect(one.body.errors).toBeUndefined();
  });

  it('a document nested thousands of levels deep is refused by the token limit while it is parsed, never with a stack overflow', async () => {
    const answer = await post(`{ ${'workspace(id: "x") { '.repeat(3000)}id${' }'.repeat(3000)} }`);
    expectRefused(answer, 400, 'GRAPHQL_PARSE_FAILED');
  });

  it('fragments that each spread the next twice (2^20 selections) are refused by the recursive-selection limit before the cost is estimated', async () => {
    const fragments = Array.from({ length: 20 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join(' ');
    const answer = await post(`query { ...F0 } ${fragments} fragment F20 on Query { __typename }`);
    expectRefused(answer, 400, 'GRAPHQL_VALIDATION_FAILED');
    expect(answer.body.errors?.[0]?.message).toBe('Anonymous operation recursively requests too many selections.');
  });
});
