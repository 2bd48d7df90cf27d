import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';

export type DatabaseTarget = 'embedded' | 'postgres';

/** The embedded database always; a real PostgreSQL too when DATABASE_URL names one. */
export function databaseTargets(): DatabaseTarget[] {
  return process.env.DATABASE_URL ? ['embedded', 'postgres'] : ['embedded'];
}

/**
 * A migrated database of the test's own: in memory for the embedded target; on PostgreSQL a
 * fresh database created for this test file and dropped when it is closed.
 */
export async function openTestDatabase(target: DatabaseTarget): Promise<Database> {
  if (target === 'embedded') {
    const db = await openDatabase({});
    await migrate(db);
    return db;
  }
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('DATABASE_URL is not set');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ url: url.toString(), poolSize: 10, statementTimeoutMs: 30_000 });
  await migrate(db);
  const close = db.close.bind(db);
  return Object.assign(db, {
    async close() {
      await close();
      const dropper = new pg.Client({ connectionString: adminUrl });
      await dropper.connect();
      try {
        await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await dropper.end();
      }
    },
  });
}
