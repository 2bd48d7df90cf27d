import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/service-commands.ts';

/** Statement text: a keyword that starts a statement, followed by what only SQL puts after it. */
const STATEMENT = /\b(SELECT\s+[\w*"(]|INSERT\s+INTO\s|UPDATE\s+\w+\s+(?:\w+\s+)?SET\s|DELETE\s+FROM\s|WITH\s+\w+\s+AS\s*\()/;

/** The data layer (plumbing, the catalog's reader, SQL generation) and the stores: the only modules that may hold SQL. */
const ALLOWED = /^src\/(db|model|sql)\/|-store\.ts$/;

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

describe('where SQL lives', () => {
  it('statement text appears only in src/db, src/model, src/sql and the *-store.ts modules', async () => {
    const files = [...(await sourceFiles('src')), ...(await sourceFiles('rest'))];
    expect(files.length).toBeGreaterThan(40);
    const offending: string[] = [];
    for (const file of files) {
      if (ALLOWED.test(file)) continue;
      const lines = (await readFile(join(ROOT, file), 'utf8')).split('\n');
      lines.forEach((line, index) => {
        if (STATEMENT.test(line)) offending.push(`${file}:${index + 1}: ${line.trim()}`);
      });
    }
    expect(offending).toEqual([]);
  });

  it('the check recognises the statement forms the stores use', () => {
    for (const sql of [
      'SELECT id FROM workspaces',
      'SELECT * FROM unnest($1::text[])',
      'INSERT INTO members (id) VALUES ($1)',
      'UPDATE api_keys SET revoked_at = now()',
      'UPDATE webhook_deliveries d SET lease_until = NULL',
      'DELETE FROM rate_limits WHERE expire < $1',
      'WITH delivery AS (UPDATE x SET y = 1)',
    ]) {
      expect(STATEMENT.test(sql), sql).toBe(true);
    }
    expect(STATEMENT.test('// Select the fields to read')).toBe(false);
  });
});
