import type pg from 'pg';

export type Role = 'origin' | 'replica';
export type Statement = [string, unknown[]?];

/**
 * Statements in one committed transaction on a client of the test's own (plain SQL, not the
 * service's code), in the role given: `replica` is how logical replication's apply worker writes.
 * The role is set for the transaction alone: on the embedded database every connection shares
 * one session.
 */
export async function writeInTransaction(sql: pg.Client, statements: Statement[], role: Role = 'origin'): Promise<pg.QueryResult[]> {
  await sql.query('BEGIN');
  try {
    if (role === 'replica') await sql.query('SET LOCAL session_replication_role = replica');
    const results: pg.QueryResult[] = [];
    for (const [text, values] of statements) results.push(await sql.query(text, values));
    await sql.query('COMMIT');
    return results;
  } catch (error) {
    await sql.query('ROLLBACK');
    throw error;
  }
}
