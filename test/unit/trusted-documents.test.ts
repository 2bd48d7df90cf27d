import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { documentsFromFile } from '../../src/auth/trusted-documents.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('the documents of a file given to internal-token documents add', () => {
  it('a file of one operation is registered byte for byte, under the SHA-256 of its text', () => {
    const text = '# the team’s query\nquery One { __typename }\n';
    expect(documentsFromFile(text, 'one.graphql')).toEqual([{ hash: sha256(text), body: text, operationNames: ['One'] }]);
  });

  it('a file of several operations gives one document per operation, with the fragments it uses, as graphql-js prints it', () => {
    const text = 'query A { ...F } query B { __typename } fragment F on Query { __typename }';
    const documents = documentsFromFile(text, 'many.graphql');
    expect(documents.map((document) => document.operationNames)).toEqual([['A'], ['B']]);
    expect(documents[0]!.body).toBe('query A {\n  ...F\n}\n\nfragment F on Query {\n  __typename\n}');
    expect(documents[1]!.body).toBe('query B {\n  __typename\n}');
    for (const document of documents) expect(document.hash).toBe(sha256(document.body));
    expect(() => documentsFromFile('query A { __typename } { __typename }', 'anonymous.graphql')).toThrow(/several operations: each must have a name/);
  });

  it('an anonymous query starting with "{" is GraphQL unless the file is named .json', () => {
    expect(documentsFromFile('{ __typename }', 'q.graphql')).toHaveLength(1);
    expect(() => documentsFromFile('{ __typename }', 'q.json')).toThrow(/not valid JSON/);
  });
});
