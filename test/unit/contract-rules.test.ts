import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/contract-rules.md restates every rule of the API's contract under an id (`http.checks-order`),
 * and the tests name the ids they check at the start of their names. This file keeps the two tied in
 * both directions: a rule no test names is a rule nobody checks, and a test name or a code comment
 * citing an id the page does not define points a maintainer at a rule that does not exist.
 *
 * It also keeps the repository whole. What the code relies on is written down here, in docs/ and
 * openapi/; a comment or page that cites a text kept somewhere else (a product owner's notes, a
 * numbered part of a contract document) sends the reader to something they cannot open. So it
 * refuses such citations: the words that would name an outside text, and relative paths leaving the
 * repository. The changelog's history is the one place where the word may appear, without a path.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RULES_PAGE = 'docs/contract-rules.md';
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url));

/** The shape of a rule id: a topic and a name, e.g. `http.checks-order`. */
const ID = String.raw`[a-z][a-z0-9]*\.[a-z][a-z0-9-]*[a-z0-9]`;
/** What a word shaped like an id may still be: a file name. */
const FILE_NAME = /\.(?:ts|js|cjs|mjs|md|sql|ya?ml|json|ics|graphql|html|txt)$/;

function filesUnder(directory: string, accept: (path: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (path: string): void => {
    for (const entry of readdirSync(join(ROOT, path))) {
      if (entry === 'node_modules' || entry.startsWith('.')) continue;
      const child = join(path, entry);
      if (statSync(join(ROOT, child)).isDirectory()) walk(child);
      else if (accept(child)) found.push(child);
    }
  };
  walk(directory);
  return found.sort();
}

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Every id the page defines: the first cell of a table row, in backticks. */
function definedIds(): string[] {
  return [...read(RULES_PAGE).matchAll(new RegExp(String.raw`^\|\s*\`(${ID})\`\s*\|`, 'gm'))].map((match) => match[1]!);
}

const TEST_FILES = filesUnder('test', (path) => path.endsWith('.test.ts'));

/**
 * Ids at the start of test names: the first string argument of `it(`, `test(`, `describe(`, the
 * variant suites of test/support/variants.ts, or of the call that `it.each(…)` / `describe.each(…)`
 * returns, in quotes or backticks.
 */
function testNameIds(): Array<{ id: string; file: string }> {
  const pattern = new RegExp(String.raw`(?:\b(?:it|test|describe|describeOnEachDatabase|describeOnEachStore|describeWhere)|\))\(\s*['"\`](${ID}):\s`, 'g');
  return TEST_FILES.flatMap((file) => [...read(file).matchAll(pattern)].map((match) => ({ id: match[1]!, file })));
}

/** Ids cited after `docs/contract-rules.md` in comments and prose, up to the end of the citation. */
function citedIds(): Array<{ id: string; file: string }> {
  const files = ['src', 'rest', 'test', 'examples', 'docs', 'bench'].flatMap((directory) =>
    filesUnder(directory, (path) => /\.(?:ts|sql|md)$/.test(path) && path !== RULES_PAGE && path !== THIS_FILE),
  );
  const cited: Array<{ id: string; file: string }> = [];
  for (const file of [...files, 'README.md']) {
    const text = read(file);
    for (const match of text.matchAll(/docs\/contract-rules\.md/g)) {
      // A citation ends at its closing parenthesis, or else at the end of its sentence; comment
      // markers of wrapped lines do not interrupt it.
      const after = text
        .slice(match.index + match[0].length, match.index + match[0].length + 160)
        .replace(/\n\s*(?:\*|\/\/|--)?\s*/g, ' ');
      const citation = after.split(/\)|\.\s|\.$/)[0]!;
      for (const id of citation.matchAll(new RegExp(String.raw`(?<![\w./-])${ID}(?![\w-])`, 'g'))) {
        if (!FILE_NAME.test(id[0])) cited.push({ id: id[0], file });
      }
    }
  }
  return cited;
}

describe('docs/contract-rules.md', () => {
  const ids = definedIds();

  it('defines each rule id once', () => {
    expect(ids.length).toBeGreaterThan(50);
    const duplicates = ids.filter((id, index) => ids.indexOf(id) !== index);
    expect(duplicates, `ids defined more than once: ${duplicates.join(', ')}`).toEqual([]);
  });

  it('every rule id is named at the start of at least one test name', () => {
    const named = new Set(testNameIds().map(({ id }) => id));
    const missing = ids.filter((id) => !named.has(id));
    expect(missing, `rule ids no test names: ${missing.join(', ')}`).toEqual([]);
  });

  it('every id at the start of a test name is a rule id of the page', () => {
    const known = new Set(ids);
    const unknown = testNameIds().filter(({ id }) => !known.has(id)).map(({ id, file }) => `${id} (${file})`);
    expect(unknown, `test names with ids the page does not define: ${unknown.join(', ')}`).toEqual([]);
  });

  it('every id cited after docs/contract-rules.md in src/, rest/, test/, examples/, docs/, bench/ and README.md is a rule id of the page', () => {
    const known = new Set(ids);
    const citations = citedIds();
    expect(citations.length).toBeGreaterThan(10);
    const unknown = citations.filter(({ id }) => !known.has(id)).map(({ id, file }) => `${id} (${file})`);
    expect(unknown, `citations of ids the page does not define: ${unknown.join(', ')}`).toEqual([]);
  });

  it('the repository stands alone: no file cites a contract text kept outside it, so every rule a reader is sent to is here', () => {
    const files = ['src', 'rest', 'test', 'examples', 'docs', 'bench', 'openapi', 'schema'].flatMap((directory) =>
      filesUnder(directory, (path) => /\.(?:ts|sql|md|ya?ml|graphql|json)$/.test(path) && path !== THIS_FILE),
    );
    // Spelled so that a search of the repository for these citations finds none in this file.
    const outside = /decision[s]\.md|public-api-v1\.md|\.\.\/shared\/|\bcontract (?:part )?\d/i;
    // The changelog's history may use the word, as long as it names no file outside.
    const usesOutsideWord = (file: string) => file !== 'CHANGELOG.md' && /\bdecision[s]\b/i.test(read(file));
    const offending = [...files, 'README.md', 'CHANGELOG.md'].filter((file) => outside.test(read(file)) || usesOutsideWord(file));
    expect(offending, `files that point outside the repository: ${offending.join(', ')}`).toEqual([]);
  });
});
