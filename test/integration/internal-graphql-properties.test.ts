import fc from 'fast-check';
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type IntrospectionQuery,
} from 'graphql';
import { beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { encodeCursor } from '../../src/loaders/cursor.ts';
import { cliOn } from '../support/cli.ts';
import { INTERNAL_TOKEN, type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/** Selections nest at most this deep: deeper documents are refused by the depth limit anyway. */
const MAX_DEPTH = 6;
const RUNS = 200;

/** What an answer must never show: SQL, driver or database text, stack frames, file paths. */
const INTERNALS = /SELECT |\bFROM \w+ t\b|node_modules|\.[jt]s:\d|\n\s+at |invalid input syntax|invalid byte sequence|out of range for type|relation "|column "|SQLSTATE|PGlite|RangeError|TypeError/;

interface Answer {
  status: number;
  contentType: string;
  text: string;
  body: { data?: unknown; errors?: Array<{ message?: unknown; extensions?: { code?: unknown } }> };
}

/** Every string an answer holds, and what the opaque ones (cursors) decode to. */
function stringsIn(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') {
    into.push(value);
    if (/^[A-Za-z0-9_-]{16,}$/.test(value)) into.push(Buffer.from(value, 'base64url').toString('utf8'));
  } else if (Array.isArray(value)) for (const item of value) stringsIn(item, into);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) stringsIn(item, into);
  return into;
}

describeOnEachDatabase('documents generated from the served schema, with a restricted and an unrestricted token (%s)', (target) => {
  let db: Database;
  let api: TestApi;
  let alpha: SeededWorkspace;
  let bravo: SeededWorkspace;
  let restrictedToken: string;
  /** Ids, names, titles and e-mail addresses of Bravo, which the token restricted to Alpha must never see. */
  let bravoValues: string[];
  let cursors: string[];

  const post = async (token: string, query: string, variables: Record<string, unknown>): Promise<Answer> => {
    const response = await fetch(`${api.server.internalUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const text = await response.text();
    return { status: response.status, contentType: response.headers.get('content-type') ?? '', text, body: JSON.parse(text) as Answer['body'] };
  };

  beforeAll(async () => {
    ({ db, api } = await sharedTestApi(target));
    alpha = await seedWorkspace(db, contractFixture('Alpha', 8));
    bravo = await seedWorkspace(db, contractFixture('Bravo', 8));
    restrictedToken = (await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'generated', '--workspaces', alpha.workspaceId, '--personal-data')).token;
    const rows = await db.query<{ value: string }>(
      `SELECT id AS value FROM workspaces WHERE id = $1
       UNION ALL SELECT id FROM course_templates WHERE workspace_id = $1 UNION ALL SELECT title FROM course_templates WHERE workspace_id = $1
       UNION ALL SELECT id FROM course_runs WHERE workspace_id = $1 UNION ALL SELECT id FROM sessions WHERE workspace_id = $1
       UNION ALL SELECT id FROM bookings WHERE workspace_id = $1
       UNION ALL SELECT p.name FROM participants p JOIN bookings b ON b.id = p.booking_id WHERE b.workspace_id = $1
       UNION ALL SELECT p.email FROM participants p JOIN bookings b ON b.id = p.booking_id WHERE b.workspace_id = $1`,
      [bravo.workspaceId],
    );
    bravoValues = rows.rows.map((row) => row.value);
    expect(bravoValues.length).toBeGreaterThan(20);
    // Real cursors of both workspaces, for the generated documents to page from.
    cursors = [];
    for (const ws of [alpha, bravo]) {
      const { body } = await api.graphql(
        `query($id: ID!) { workspace(id: $id) { bookingsConnection(first: 3) { pageInfo { endCursor } } courseRunsConnection(first: 2) { pageInfo { endCursor } } coursesConnection(first: 1) { pageInfo { endCursor } } } }`,
        { id: ws.workspaceId },
      );
      cursors.push(...stringsIn(body.data).filter((value) => /^[A-Za-z0-9_-]{16,}$/.test(value)));
    }
    expect(cursors.length).toBeGreaterThanOrEqual(6);
  });

  it('no answer is a 5xx, every error carries a code and no internals, and the restricted token never sees another workspace', async () => {
    const { body } = await api.graphql(getIntrospectionQuery());
    const schema = buildClientSchema(body.data as unknown as IntrospectionQuery);
    const ids = [alpha.workspaceId, bravo.workspaceId, ...Object.values(alpha.ids), ...Object.values(bravo.ids)];

    const text = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...ids) },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme-composite', maxLength: 12 }) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
      { weight: 1, arbitrary: fc.constantFrom('', '\u0000', `${ids[0]}\u0000`, 'x'.repeat(5000), "' OR '1'='1") },
    );
    const forgedCursor = fc
      .tuple(
        fc.constantFrom('Workspace.bookings', 'Workspace.courseRuns', 'Workspace.courses', 'CourseRun.sessions', 'CourseRun.bookings', 'Workspace.courseTemplates'),
        fc.array(fc.oneof(fc.constantFrom('2026-13-45 99:99:99', '0000-01-01 00:00:00', '2026-07-01 00:01:00', '9999-12-31 23:59:59.999999'), text, fc.integer(), fc.constant(null)), { maxLength: 3 }),
      )
      .map(([list, values]) => encodeCursor(list, values));
    const cursor = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...cursors) }, { weight: 2, arbitrary: forgedCursor }, { weight: 1, arbitrary: text });
    const dateTime = fc.oneof(
      { weight: 6, arbitrary: fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((date) => date.toISOString()) },
      fc.constantFrom('2026-13-45T99:99:99Z', '0000-01-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-07-01T00:00:00+14:00', '9999-12-31T23:00:00-02:00', '2026-07-01 10:00'),
      text,
    );
    const literal = (value: unknown) => JSON.stringify(value);

    const inputCache = new Map<string, fc.Arbitrary<string>>();
    /** A literal for an argument: mostly of its type, sometimes null or a value of another type. */
    const inputValue = (type: GraphQLInputType, name: string, depth = 0): fc.Arbitrary<string> => {
      const key = `${String(type)}:${name}:${depth}`;
      const cached = inputCache.get(key);
      if (cached) return cached;
      let arbitrary: fc.Arbitrary<string>;
      if (isNonNullType(type)) arbitrary = inputValue(type.ofType, name, depth);
      else if (isListType(type)) arbitrary = fc.array(inputValue(type.ofType, name, depth + 1), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`);
      else if (isInputObjectType(type)) {
        const fields = Object.values(type.getFields());
        arbitrary =
          depth > 2
            ? fc.constant('{}')
            : fc
                .tuple(...fields.map((field) => fc.option(inputValue(field.type, field.name, depth + 1), { freq: 2 })))
                .map((values) => `{ ${fields.flatMap((field, i) => (values[i] === null ? [] : [`${field.name}: ${values[i]}`])).join(', ')} }`);
      } else if (isEnumType(type)) arbitrary = fc.oneof({ weight: 20, arbitrary: fc.constantFrom(...type.getValues().map((value) => value.name)) }, { weight: 1, arbitrary: fc.constant('NOT_A_VALUE') });
      else if (name === 'after' || name === 'before') arbitrary = cursor.map(literal);
      else if (type.name === 'Int') arbitrary = fc.oneof(fc.integer({ min: -2, max: 102 }), fc.constantFrom(0, 2147483647, -2147483648)).map(String);
      else if (type.name === 'DateTime') arbitrary = dateTime.map(literal);
      else if (type.name === 'Boolean') arbitrary = fc.boolean().map(String);
      else if (type.name === 'Float') arbitrary = fc.double({ noNaN: true, noDefaultInfinity: true }).map(String);
      else arbitrary = text.map(literal);
      const withStrays = fc.oneof({ weight: 40, arbitrary }, { weight: 1, arbitrary: fc.constant('null') }, { weight: 1, arbitrary: fc.constantFrom('"x"', '7', '[]', '{}', 'true') });
      inputCache.set(key, withStrays);
      return withStrays;
    };

    const selectionCache = new Map<string, fc.Arbitrary<string>>();
    const fieldSelection = (field: GraphQLField<unknown, unknown>, depth: number): fc.Arbitrary<string> => {
      const args = fc.tuple(...field.args.map((arg) => fc.option(inputValue(arg.type, arg.name), { freq: isNonNullType(arg.type) ? 20 : 2 })));
      const named = getNamedType(field.type);
      const sub = isLeafType(named) || !isObjectType(named) ? fc.constant('') : selectionSet(named, depth + 1).map((inner) => ` { ${inner} }`);
      // Aliases named after their field: two fields under one alias would only make validation conflicts.
      const alias = fc.option(fc.constantFrom('a', 'b'), { freq: 4 });
      return fc.tuple(alias, args, sub).map(([prefix, values, inner]) => {
        const given = field.args.flatMap((arg, i) => (values[i] === null || values[i] === undefined ? [] : [`${arg.name}: ${values[i]}`]));
        return `${prefix ? `${prefix}_${field.name}: ` : ''}${field.name}${given.length > 0 ? `(${given.join(', ')})` : ''}${inner}`;
      });
    };
    /** One to four fields of `type`; past MAX_DEPTH only its leaves. */
    function selectionSet(type: GraphQLObjectType, depth: number): fc.Arbitrary<string> {
      const key = `${type.name}:${depth}`;
      const cached = selectionCache.get(key);
      if (cached) return cached;
      const all = Object.values(type.getFields());
      const fields = depth >= MAX_DEPTH ? all.filter((field) => isLeafType(getNamedType(field.type))) : all;
      const arbitrary =
        fields.length === 0
          ? fc.constant('__typename')
          : fc
              .uniqueArray(fc.constantFrom(...fields), { minLength: 1, maxLength: 4, selector: (field) => field.name })
              .chain((chosen) => fc.tuple(...chosen.map((field) => fieldSelection(field, depth))))
              .map((parts) => parts.join(' '));
      selectionCache.set(key, arbitrary);
      return arbitrary;
    }

    const queryType = schema.getQueryType()!;
    const workspaceType = schema.getType('Workspace') as GraphQLObjectType;
    const document = fc.oneof(
      selectionSet(queryType, 1).map((selection) => ({ query: `{ ${selection} }`, variables: {} as Record<string, unknown> })),
      selectionSet(queryType, 1).map((selection) => ({ query: `query Named { ...Root } fragment Root on Query { ${selection} }`, variables: {} })),
      fc.tuple(selectionSet(workspaceType, 2), fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: fc.jsonValue() })).map(([selection, id]) => ({
        query: `query($id: ID!, $on: Boolean = true) { workspace(id: $id) @include(if: $on) { ${selection} } }`,
        variables: { id },
      })),
    );

    const codes = new Map<string, number>();
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(document, async ({ query, variables }) => {
        for (const token of [restrictedToken, INTERNAL_TOKEN]) {
          const answer = await post(token, query, variables);
          const where = `${token === INTERNAL_TOKEN ? 'unrestricted' : 'restricted'} ${answer.status}: ${answer.text.slice(0, 300)}`;
          expect(answer.status, where).toBeLessThan(500);
          expect(answer.contentType, where).toMatch(/^application\/(graphql-response\+)?json/);
          expect(answer.text, where).not.toMatch(INTERNALS);
          for (const error of answer.body.errors ?? []) {
            expect(typeof error.extensions?.code, where).toBe('string');
            expect(error.extensions?.code, where).not.toBe('internal_error');
            codes.set(String(error.extensions!.code), (codes.get(String(error.extensions!.code)) ?? 0) + 1);
          }
          if (answer.body.data && !answer.body.errors) answered += 1;
          if (token === restrictedToken) {
            const seen = stringsIn(answer.body.data);
            const asked = `${query}${JSON.stringify(variables)}`;
            const told = stringsIn(answer.body.errors);
            for (const value of bravoValues) {
              expect(seen.some((shown) => shown.includes(value)), `${value} in data: ${where}`).toBe(false);
              // An error may repeat what the request itself said (an argument's value), nothing more.
              if (!asked.includes(value)) expect(told.some((shown) => shown.includes(value)), `${value} in errors: ${where}`).toBe(false);
            }
          }
        }
      }),
      { numRuns: RUNS },
    );
    // The generated mix reaches the data as well as the refusals.
    expect(answered, JSON.stringify([...codes])).toBeGreaterThan(RUNS / 10);
    expect(codes.size, JSON.stringify([...codes])).toBeGreaterThan(1);
  }, 300_000);
});
