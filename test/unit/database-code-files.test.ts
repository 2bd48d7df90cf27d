import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CODE_DIR, databaseCode } from '../../src/db/database-code.ts';
import { packagePath } from '../../src/package-root.ts';

const MIGRATIONS_DIR = packagePath('src', 'db', 'migrations');
const migrations = readdirSync(MIGRATIONS_DIR)
  .filter((name) => name.endsWith('.sql'))
  .map((name) => ({ name, text: readFileSync(`${MIGRATIONS_DIR}/${name}`, 'utf8') }));

/**
 * The first migration's tables call new_id (their DEFAULTs) and is_iana_time_zone (a CHECK) before
 * src/db/code is applied on a fresh database: it keeps the definitions they had then, which
 * src/db/code/core-model.sql replaces. No other migration defines code.
 */
const BOOTSTRAP = { migration: '1763800000000_core-model.sql', functions: ['new_id', 'is_iana_time_zone'] };

const definitions = (text: string) => [...text.matchAll(/^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE)\s+(\w+)\s*\(/gim)].map((match) => match[2]!);
const triggers = (text: string) => [...text.matchAll(/\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?TRIGGER\s+(\w+)/gi)].map((match) => match[1]!);

describe('src/db/code and src/db/migrations', () => {
  it("no migration defines a function or a trigger, or sets a trigger's role: the code is in src/db/code", () => {
    for (const { name, text } of migrations) {
      const functions = definitions(text);
      expect(functions, name).toEqual(name === BOOTSTRAP.migration ? BOOTSTRAP.functions : []);
      expect(triggers(text), name).toEqual([]);
      expect(text, name).not.toMatch(/ENABLE\s+(REPLICA|ALWAYS)\s+TRIGGER/i);
    }
  });

  it('each function is defined once, in one file, by CREATE OR REPLACE; each trigger once', () => {
    const where = new Map<string, string[]>();
    for (const file of databaseCode().list) {
      for (const name of [...definitions(file.text), ...triggers(file.text)]) where.set(name, [...(where.get(name) ?? []), file.name]);
      expect(file.text, file.name).not.toMatch(/^\s*CREATE\s+(FUNCTION|PROCEDURE)\b/im);
    }
    for (const [name, files] of where) expect(files, name).toHaveLength(1);
    for (const name of BOOTSTRAP.functions) expect(where.get(name), name).toEqual(['core-model.sql']);
    expect(databaseCode().list.map((file) => file.name)).toEqual(readdirSync(CODE_DIR).filter((name) => name.endsWith('.sql')).sort());
  });
});
