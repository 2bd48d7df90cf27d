import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { expect } from 'vitest';
import type { DatabaseTarget } from './databases.ts';

/** An id inlined into a COPY statement, which takes no parameters. */
export function idLiteral(id: string): string {
  expect(id).toMatch(/^[a-z]+_[0-9a-f]{32}$/);
  return `'${id}'`;
}

/**
 * Runs `work` with a CSV file of the rows `select` returns, written by the database server itself
 * (COPY … TO a file), so that `COPY … FROM` that path reads it on either target: PGlite's file
 * system is its own, in memory. On PostgreSQL the file is on the server's machine and is removed
 * afterwards (COPY … TO PROGRAM, as the superuser these tests run as).
 */
export async function withServerFile<T>(sql: pg.Client, target: DatabaseTarget, select: string, work: (path: string) => Promise<T>): Promise<T> {
  const path = `/tmp/copy-${randomUUID()}.csv`;
  await sql.query(`COPY (${select}) TO '${path}' WITH (FORMAT csv)`);
  try {
    return await work(path);
  } finally {
    if (target === 'postgres') await sql.query(`COPY (SELECT 1 WHERE false) TO PROGRAM 'rm -f ${path}'`);
  }
}
