import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { codeDifferences } from '../../src/db/code-differences.ts';
import { readCodeDefinitions } from '../../src/db/database-code.ts';
import type { Database } from '../../src/db/database.ts';
import { migrate, SHIPPED_MIGRATIONS } from '../../src/db/migrate.ts';
import { readCatalog } from '../../src/model/catalog.ts';
import { PACKAGE_ROOT } from '../../src/package-root.ts';
import { openEmptyTestDatabase, openTestDatabase } from '../support/databases.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const run = promisify(execFile);

/**
 * Databases of earlier releases, by the commit whose src/db/migrations they were migrated with: the
 * first documented release (1.0.0-beta.1, four migrations, before any trigger), and the last one,
 * whose functions and triggers were still in its migrations. Read from the repository's history (a
 * clone has it), not kept as copies: a second set of every old function body would sit beside
 * src/db/code. Add each release here.
 */
const RELEASES = [
  { commit: 'f100320', name: '1.0.0-beta.1' },
  { commit: '9c15bee', name: 'the last release' },
] as const;

/** A release's migration files, written to a directory of their own. */
async function releaseMigrations(commit: string): Promise<string> {
  const git = (...args: string[]) => run('git', ['-C', PACKAGE_ROOT, ...args], { maxBuffer: 16 * 1024 * 1024 });
  const { stdout } = await git('ls-tree', '--name-only', commit, 'src/db/migrations/');
  const files = stdout.split('\n').filter((path) => path.endsWith('.sql'));
  if (files.length === 0) throw new Error(`git ls-tree ${commit} src/db/migrations/ lists no migration: the repository's history is needed`);
  const dir = await mkdtemp(join(tmpdir(), 'release-migrations-'));
  for (const path of files) await writeFile(join(dir, basename(path)), (await git('show', `${commit}:${path}`)).stdout);
  return dir;
}

/** What a release's `migrate` did: its migrations in one transaction, the job queue's schema, the trigger roles (once there were any). */
async function migrateAsRelease(db: Database, dir: string): Promise<string[]> {
  const { runner } = await import('node-pg-migrate');
  const client = await db.pool.connect();
  const quiet = () => {};
  let applied: string[];
  try {
    applied = (await runner({ dbClient: client, dir, direction: 'up', migrationsTable: 'schema_migrations', singleTransaction: true, checkOrder: true, advisoryLockMode: 'wait', log: quiet, logger: { debug: quiet, info: quiet, warn: quiet, error: quiet } })).map((migration) => migration.name);
  } finally {
    client.release();
  }
  // Releases up to 9c15bee installed graphile-worker's schema (since gone: the deliveries table is the one
  // queue); a development dependency now, only so that the release's database is as it was.
  const { Logger, runMigrations } = await import('graphile-worker');
  await runMigrations({ pgPool: db.pool, noPreparedStatements: !db.namedStatements, logger: new Logger(() => () => {}) });
  const roles = await db.query<{ found: string | null }>(`SELECT to_regprocedure('restore_trigger_roles()') AS found`);
  if (roles.rows[0]!.found) await db.query('SELECT restore_trigger_roles()');
  return applied;
}

for (const release of RELEASES) {
  describeOnEachDatabase(`a database migrated by ${release.name} (${release.commit}), upgraded, on %s`, (target) => {
    let dir: string;
    let upgraded: Database;
    let fresh: Database;
    beforeAll(async () => {
      dir = await releaseMigrations(release.commit);
      [upgraded, fresh] = await Promise.all([openEmptyTestDatabase(target), openTestDatabase(target)]);
    }, 120_000);
    afterAll(async () => {
      await Promise.all([upgraded?.close(), fresh?.close()]);
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('has the functions, triggers, tables and columns of a freshly migrated database, and its rows keep working', async () => {
      const released = await migrateAsRelease(upgraded, dir);
      // Rows written under the release's code.
      const q = async (text: string, values: unknown[] = []) => (await upgraded.query<Record<string, string>>(text, values)).rows[0]!;
      const { id: workspace } = await q(`INSERT INTO workspaces (name) VALUES ('Upgraded') RETURNING id`);
      const { id: template } = await q(`INSERT INTO course_templates (workspace_id, title) VALUES ($1, 'Course') RETURNING id`, [workspace]);
      const { id: courseRun } = await q(`INSERT INTO course_runs (workspace_id, template_id, status) VALUES ($1, $2, 'published') RETURNING id`, [workspace, template]);
      await q(`INSERT INTO sessions (workspace_id, course_run_id, starts_at, duration_minutes, time_zone) VALUES ($1, $2, '2030-01-02T09:00:00Z', 60, 'UTC') RETURNING id`, [workspace, courseRun]);

      expect((await migrate(upgraded)).applied).toEqual(SHIPPED_MIGRATIONS.filter((name) => !released.includes(name)));
      // The run's listing, which the later migrations' data move or the release's trigger gave it.
      expect((await q('SELECT listed_from FROM course_runs WHERE id = $1', [courseRun])).listed_from).toEqual(new Date('2030-01-02T09:00:00Z'));

      expect(Object.fromEntries(await readCodeDefinitions(upgraded))).toEqual(Object.fromEntries(await readCodeDefinitions(fresh)));
      expect(await readCatalog(upgraded)).toEqual(await readCatalog(fresh));
      expect(await codeDifferences(upgraded)).toEqual([]);

      // The upgraded code on the rows of before: an earlier session moves the run's listing and the workspace's data version.
      const version = async () => Number((await q('SELECT sum(version) AS n FROM data_versions WHERE workspace_id = $1', [workspace])).n);
      const before = await version();
      await q(`INSERT INTO sessions (workspace_id, course_run_id, starts_at, duration_minutes, time_zone) VALUES ($1, $2, '2030-01-01T09:00:00Z', 60, 'UTC') RETURNING id`, [workspace, courseRun]);
      expect((await q('SELECT listed_from FROM course_runs WHERE id = $1', [courseRun])).listed_from).toEqual(new Date('2030-01-01T09:00:00Z'));
      expect(await version()).toBeGreaterThan(before);
    });
  });
}
