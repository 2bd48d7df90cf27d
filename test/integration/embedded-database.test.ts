import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { migrate, pendingMigrations } from '../../src/db/migrate.ts';
import { builtModule } from '../support/service-commands.ts';

describe('embedded database (PGlite through the pg driver)', () => {
  it('answers 1,000 concurrent parameterized queries, each with its own correct result', async () => {
    // The pool's wait for a free connection is bounded in production; here a slow machine must
    // not turn a queue of 1,000 statements into a failure of correctness.
    const db = await openDatabase({ poolSize: 10, connectionTimeoutMs: 60_000 });
    try {
      await migrate(db);
      const results = await Promise.all(
        Array.from({ length: 1000 }, (_, i) =>
          db.query<{ doubled: number; echoed: string; zone_ok: boolean }>(
            'SELECT $1::int * 2 AS doubled, $2::text AS echoed, is_iana_time_zone($3) AS zone_ok',
            [i, `value-${i}-é`, i % 2 === 0 ? 'Europe/Berlin' : 'Mars/Base'],
          ),
        ),
      );
      results.forEach((result, i) => {
        expect(result.rows).toEqual([{ doubled: i * 2, echoed: `value-${i}-é`, zone_ok: i % 2 === 0 }]);
      });
    } finally {
      await db.close();
    }
  }, 120_000);

  it('keeps concurrent transactions apart: a rolled-back transaction leaves nothing, committed ones everything', async () => {
    const db = await openDatabase({ poolSize: 6 });
    try {
      await migrate(db);
      const outcomes = await Promise.allSettled(
        Array.from({ length: 40 }, (_, i) =>
          db.transaction(async (client) => {
            await client.query('INSERT INTO workspaces (name) VALUES ($1)', [`tx-${i}`]);
            await client.query('SELECT pg_sleep(0.001)');
            if (i % 4 === 0) throw new Error('roll back');
          }),
        ),
      );
      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toHaveLength(10);
      const names = (await db.query<{ name: string }>("SELECT name FROM workspaces WHERE name LIKE 'tx-%' ORDER BY name")).rows.map((row) => row.name);
      const expected = Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 4 !== 0).map((i) => `tx-${i}`).sort();
      expect(names).toEqual(expected);
    } finally {
      await db.close();
    }
  });

  it('persists under its data directory across restarts, with no migration pending the second time', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'embedded-'));
    try {
      const first = await openDatabase({ dataDir: dir });
      expect((await migrate(first)).applied.length).toBeGreaterThan(0);
      await first.query("INSERT INTO workspaces (name) VALUES ('kept')");
      await first.close();
      const second = await openDatabase({ dataDir: dir });
      expect(await pendingMigrations(second)).toEqual([]);
      expect((await migrate(second)).applied).toEqual([]);
      expect((await second.query("SELECT count(*)::int AS n FROM workspaces WHERE name = 'kept'")).rows[0]).toEqual({ n: 1 });
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses to open data files another live process holds, and reaches them through its socket when shared', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'embedded-'));
    try {
      const owner = await openDatabase({ dataDir: dir, shareEmbedded: true });
      await migrate(owner);
      await owner.query("INSERT INTO workspaces (name) VALUES ('shared')");
      // Another process: it must not open the files itself, and this process must keep serving it.
      const { execFile } = await import('node:child_process');
      const { promisify } = await import('node:util');
      const script = `import { openDatabase } from ${JSON.stringify(builtModule('src/db/database.ts'))};
        const db = await openDatabase({ dataDir: ${JSON.stringify(dir)} });
        const r = await db.query("SELECT count(*)::int AS n FROM workspaces WHERE name = 'shared'");
        process.stdout.write(String(r.rows[0].n)); await db.close();`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(stdout).toBe('1');
      await owner.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
