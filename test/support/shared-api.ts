import { inject } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from './databases.ts';
import { startTestApi, type TestApi } from './public-api.ts';
import type { DatabaseTarget } from './variants.ts';

/** A database and the server over it, as a test file that only reads takes them. */
export interface SharedApi {
  db: Database;
  /** The server, with `logs` holding only what it wrote since this file took it. */
  api: TestApi;
}

const started = new Map<DatabaseTarget, Promise<{ db: Database; api: TestApi }>>();

/**
 * One migrated database and one server with the suite's default settings per worker and database
 * target, for the test files that seed a workspace of their own and read it through keys of their
 * own: each file opening a database and starting a server cost about 1 s of CPU on the embedded
 * database, and a database created and migrated on PostgreSQL. A file that changes the server's
 * settings, the model or the schema, or state that workspaces share (a token's name, failed
 * authentications beyond a few: from 30 a minute one address is answered 429, not 401) opens its
 * own. The files of a worker run one after another (vitest.config.ts), so what a file counts
 * (statements, log lines) is its own. Neither is closed by a file: the worker's end closes them, and
 * the run's global setup drops the PostgreSQL database (migrated-database.ts).
 */
export async function sharedTestApi(target: DatabaseTarget): Promise<SharedApi> {
  let shared = started.get(target);
  if (!shared) {
    shared = openTestDatabase(target, inject('sharedDatabasePrefix')).then(async (db) => ({ db, api: await startTestApi(db) }));
    started.set(target, shared);
  }
  const { db, api } = await shared;
  const from = api.logs.length;
  return {
    db,
    api: {
      ...api,
      get logs() {
        return api.logs.slice(from);
      },
      close: async () => {},
    },
  };
}
