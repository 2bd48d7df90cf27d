import { GraphQLScalarType, parse, type OperationDefinitionNode } from 'graphql';
import { compileQuery } from 'graphql-jit';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { describe, expect, it } from 'vitest';
import { executeValidated } from '../../src/graphql/compiled-execution.ts';
import type { GraphQLContext } from '../../src/graphql/schema.ts';

/**
 * Compiled execution (graphql-jit, with patches/graphql-jit+0.8.9.patch): the same data and errors,
 * with their paths, as before the patch for leaves that are null, Errors or refused by their scalar,
 * in lists of values and of promises; and no error location or path built for a leaf without one.
 */
const Even = new GraphQLScalarType({
  name: 'Even',
  serialize(value) {
    if (typeof value !== 'number' || value % 2 !== 0) throw new TypeError(`not even: ${String(value)}`);
    return value;
  },
});

interface Item {
  name: string | null | Error;
  note?: string | null | Error;
  even: number;
}

const items: Item[] = [
  { name: 'a', note: 'x', even: 2 },
  { name: null, note: null, even: 4 },
  { name: new Error('name failed'), note: new Error('note failed'), even: 3 },
  { name: 'd', even: 6 },
];

const schema = makeExecutableSchema({
  typeDefs: /* GraphQL */ `
    scalar Even
    type Item {
      name: String!
      note: String
      even: Even!
    }
    type Group {
      items: [Item]!
      promised: [Item]!
    }
    type Query {
      groups: [Group!]!
    }
  `,
  resolvers: {
    Even,
    Query: { groups: () => [{ items }, { items: items.slice(0, 1) }] },
    Group: { promised: (group: { items: Item[] }) => group.items.map((item) => Promise.resolve(item)) },
  },
});

async function run(source: string) {
  const document = parse(source);
  const operation = document.definitions[0] as OperationDefinitionNode;
  return JSON.parse(JSON.stringify(await executeValidated(schema, document, operation, undefined, undefined, {} as GraphQLContext))) as unknown;
}

// What graphql-jit 0.8.9 answered before the patch (the same queries, unpatched).
describe('compiled execution', () => {
  it('answers leaves of values and of promises: values, nullable nulls, and an error with its path for each refused leaf', async () => {
    expect(await run('{ groups { items { ... on Item { even } } promised { name note even } } }')).toEqual({
      data: {
        groups: [
          {
            items: [{ even: 2 }, { even: 4 }, null, { even: 6 }],
            promised: [{ name: 'a', note: 'x', even: 2 }, null, null, { name: 'd', note: null, even: 6 }],
          },
          { items: [{ even: 2 }], promised: [{ name: 'a', note: 'x', even: 2 }] },
        ],
      },
      errors: [
        { message: 'note failed', path: ['groups', 0, 'promised', 2, 'note'] },
        { message: 'not even: 3', path: ['groups', 0, 'items', 2, 'even'] },
        { message: 'Cannot return null for non-nullable field Item.name.', path: ['groups', 0, 'promised', 1, 'name'] },
        { message: 'name failed', path: ['groups', 0, 'promised', 2, 'name'] },
        { message: 'not even: 3', path: ['groups', 0, 'promised', 2, 'even'] },
      ],
    });
  });

  it('gives a non-null leaf that is null, an Error or refused by its scalar its error, and a nullable leaf that is an Error its own', async () => {
    expect(await run('{ groups { items { name note even } } }')).toEqual({
      data: { groups: [{ items: [{ name: 'a', note: 'x', even: 2 }, null, null, { name: 'd', note: null, even: 6 }] }, { items: [{ name: 'a', note: 'x', even: 2 }] }] },
      errors: [
        { message: 'note failed', path: ['groups', 0, 'items', 2, 'note'] },
        { message: 'Cannot return null for non-nullable field Item.name.', path: ['groups', 0, 'items', 1, 'name'] },
        { message: 'name failed', path: ['groups', 0, 'items', 2, 'name'] },
        { message: 'not even: 3', path: ['groups', 0, 'items', 2, 'even'] },
      ],
    });
  });

  it('builds no error location or path for a leaf without an error (the patch is applied)', () => {
    const compiled = compileQuery(schema, parse('{ groups { items { name note even } } }'), undefined, { debug: true } as never) as unknown as Record<string, string>;
    const code = compiled['__DO_NOT_USE_THIS_OR_YOU_WILL_BE_FIRED_compilation']!;
    expect(code).toMatch(/NonNullLeaf\(__context, __currentItem\.name, idx0, idx1\)/);
    expect(code).toMatch(/NullableLeaf\(__context, __currentItem\.note, idx0, idx1\)/);
    expect(code).not.toMatch(/checkNonNullLeaf\(__context, __currentItem/);
  });
});
