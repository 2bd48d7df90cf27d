import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { codeDifferences } from '../../src/db/code-differences.ts';
import { CODE_DIR, databaseCode, readCodeDefinitions } from '../../src/db/database-code.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openTestDatabase } from '../support/databases.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/**
 * The database's functions and triggers are the files of src/db/code/: a migrated database has
 * each as its file defines it and nothing else, a change made by hand is named, and the files are
 * applied again whenever they change.
 */
describeOnEachDatabase('the database code of src/db/code, on %s', (target) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase(target);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  it('a migrated database has every function and trigger as its file defines it, and no other', async () => {
    expect(await codeDifferences(db)).toEqual([]);
    const defined = databaseCode().list.flatMap((file) => [...file.text.matchAll(/^CREATE OR REPLACE FUNCTION (\w+)\(/gm)].map((match) => match[1]!));
    const functions = [...(await readCodeDefinitions(db)).keys()].filter((key) => key.startsWith('function ')).map((key) => /^function (\w+)\(/.exec(key)![1]!);
    expect(functions.sort()).toEqual([...defined].sort());
    expect(new Set(defined).size).toBe(defined.length);
  });

  it('names each function or trigger changed, dropped, re-roled or added by hand, with its file', async () => {
    await db.query(`CREATE OR REPLACE FUNCTION bump_revision() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$`);
    await db.query('DROP TRIGGER sessions_listing_truncate ON sessions');
    await db.query('ALTER TABLE bookings ENABLE TRIGGER bookings_record_created_in_replica');
    await db.query(`CREATE FUNCTION stray_helper(n integer) RETURNS integer LANGUAGE sql AS $$ SELECT n $$`);
    await db.query(`CREATE TRIGGER participants_stray AFTER INSERT ON participants FOR EACH STATEMENT EXECUTE FUNCTION bump_all_data_versions()`);
    expect(await codeDifferences(db)).toEqual([
      'function bump_revision(): differs from its definition in src/db/code/revisions.sql',
      'function stray_helper(integer): not expected, no file of src/db/code defines it',
      'trigger bookings.bookings_record_created_in_replica: differs from its definition in src/db/code/booking-events.sql',
      'trigger participants.participants_stray: not expected, no file of src/db/code defines it',
      'trigger sessions.sessions_listing_truncate: missing, src/db/code/listings.sql defines it',
    ]);

    // The checksum recorded says the files were applied: a start with the same files costs one
    // statement and changes nothing but the role restore_trigger_roles() gives back.
    const statements: string[] = [];
    const stop = db.onQuery((text) => statements.push(text));
    try {
      await migrate(db);
    } finally {
      stop();
    }
    expect(statements).toHaveLength(2);
    expect(statements[1]).toBe('SELECT restore_trigger_roles()');
    expect(await codeDifferences(db)).toEqual([
      'function bump_revision(): differs from its definition in src/db/code/revisions.sql',
      'function stray_helper(integer): not expected, no file of src/db/code defines it',
      'trigger participants.participants_stray: not expected, no file of src/db/code defines it',
      'trigger sessions.sessions_listing_truncate: missing, src/db/code/listings.sql defines it',
    ]);

    // Files that changed (here: a checksum recorded by other files) are applied again, whole: what
    // no file defines is dropped, and a trigger disabled meanwhile (a restore loading its table) stays disabled.
    await db.query('ALTER TABLE sessions DISABLE TRIGGER sessions_data_version_in_replica');
    await db.query(`UPDATE schema_code SET checksum = 'of other files'`);
    await migrate(db);
    expect(await codeDifferences(db)).toEqual(['trigger sessions.sessions_data_version_in_replica: differs from its definition in src/db/code/watched-tables.generated.sql']);
    await db.query('ALTER TABLE sessions ENABLE REPLICA TRIGGER sessions_data_version_in_replica');
    expect(await codeDifferences(db)).toEqual([]);
  });

  it('a function a column\'s DEFAULT calls outlives a new application of the files, and is named when no file defines it', async () => {
    await db.query(`CREATE FUNCTION stray_default() RETURNS text LANGUAGE sql AS $$ SELECT 'x' $$`);
    await db.query('ALTER TABLE rate_limits ADD COLUMN stray text DEFAULT stray_default()');
    try {
      await db.query(`UPDATE schema_code SET checksum = 'of other files'`);
      await migrate(db);
      expect(await codeDifferences(db)).toEqual(['function stray_default(): not expected, no file of src/db/code defines it']);
    } finally {
      await db.query('ALTER TABLE rate_limits DROP COLUMN stray');
      await db.query('DROP FUNCTION stray_default()');
    }
    expect(await codeDifferences(db)).toEqual([]);
  });

  it('a database a later release migrated keeps that release\'s code: this build leaves it, at the cost of one statement', async () => {
    await db.query(`INSERT INTO schema_migrations (name, run_on) VALUES ('9999999999999_later-release', now())`);
    await db.query(`UPDATE schema_code SET checksum = 'of a later release'`);
    await db.query('CREATE OR REPLACE FUNCTION bump_revision() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$');
    try {
      const statements: string[] = [];
      const stop = db.onQuery((text) => statements.push(text));
      try {
        expect((await migrate(db)).applied).toEqual([]);
      } finally {
        stop();
      }
      expect(statements).toHaveLength(2);
      expect((await db.query<{ checksum: string }>('SELECT checksum FROM schema_code')).rows[0]!.checksum).toBe('of a later release');
      expect(await codeDifferences(db)).toEqual(['function bump_revision(): differs from its definition in src/db/code/revisions.sql']);
    } finally {
      await db.query(`DELETE FROM schema_migrations WHERE name = '9999999999999_later-release'`);
    }
    await migrate(db);
    expect(await codeDifferences(db)).toEqual([]);
  });

  it('a file the database refuses is named with its line, and nothing of the run is applied', async () => {
    // A column the code reads, renamed by hand: listings.sql's course_run_listed_from no longer compiles.
    await db.query('ALTER TABLE sessions RENAME COLUMN starts_at TO begins_at');
    await db.query(`UPDATE schema_code SET checksum = 'of other files'`);
    const refused = await migrate(db).then(() => null, (error: unknown) => String(error));
    const listings = await readFile(`${CODE_DIR}/listings.sql`, 'utf8');
    const line = listings.slice(0, listings.indexOf('min(s.starts_at)')).split('\n').length;
    expect(refused).toContain(`src/db/code/listings.sql:${line} failed: column s.starts_at does not exist (SQLSTATE 42703). Nothing of it was applied.`);
    await db.query('ALTER TABLE sessions RENAME COLUMN begins_at TO starts_at');
    expect(await codeDifferences(db)).toEqual([]);
    await migrate(db);
    expect((await db.query<{ checksum: string }>('SELECT checksum FROM schema_code')).rows[0]!.checksum).toBe(databaseCode().checksum);
  });
});
