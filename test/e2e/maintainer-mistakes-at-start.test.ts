import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSharedDatabase } from '../support/databases.ts';
import { GENERATED, MIGRATION, plantedMistakes } from '../support/planted-mistakes.ts';
import { STACK_FRAME } from '../support/scratch-copy.ts';
import { startServerProcess } from '../support/server-process.ts';
import { ROOT } from '../support/service-commands.ts';
import { describeWhere, missingFor } from '../support/variants.ts';

/**
 * The mistakes a maintainer adding a resource makes that a start meets (a migration a database with
 * rows refuses, a demo fixture edited since the build), planted one at a time on a scratch copy of
 * the repository: each is named with the way out, never with a stack trace, and the way out works.
 * The mistakes the build meets: maintainer-mistakes-in-the-build.test.ts.
 */
describe('a maintainer mistake is explained where a start meets it', () => {
  const mistakes = plantedMistakes('maintainer-mistakes-');
  const { originals, write, npm, restore, refused } = mistakes;

  const title = (text: string) => originals.get('src/demo/demo-fixture.json')!.replace('Two mornings of hands-on first aid', text);
  const fullKeyOf = (banner: string) => /Key with every scope:\s+(svc_api_\w+)/.exec(banner)![1]!;
  const coursesOf = async (banner: string, key = fullKeyOf(banner)) => fetch(`${/on (http:\/\/\S+)/.exec(banner)![1]!}/api/public/v1/courses`, { headers: { Authorization: `Bearer ${key}` } });
  const firstCourse = async (banner: string) => {
    const body = (await (await coursesOf(banner)).json()) as { data: Array<{ description: string }> };
    return body.data.map((course) => course.description).find((text) => text.includes('first aid'));
  };

  it('a demo fixture edited since the build is imported at the first start, which says so; edited again, the next start imports it again; one the migrations refuse stops the start, named', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'maintainer-mistakes-demo-'));
    const fixture = originals.get('src/demo/demo-fixture.json')!;
    try {
      await write('src/demo/demo-fixture.json', title('Two mornings of edited first aid'));
      const first = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, mistakes.scratch);
      expect(first.output()).toContain('src/demo/demo-fixture.json changed since npm run build: imported it now instead of the build');
      expect(await firstCourse(first.output())).toMatch(/^Two mornings of edited first aid/);
      expect(await first.stop()).toBe(0);

      // Unchanged since: the same demo, no notice.
      const again = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, mistakes.scratch);
      expect(again.output()).not.toContain('changed since');
      expect(/Demo workspace (\S+)/.exec(again.output())![1]).toBe(/Demo workspace (\S+)/.exec(first.output())![1]);
      expect(await again.stop()).toBe(0);

      await write('src/demo/demo-fixture.json', title('Two mornings of twice edited first aid'));
      const changed = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, mistakes.scratch);
      expect(changed.output()).toMatch(/src\/demo\/demo-fixture\.json changed since this data directory's demo was imported: imported it again as workspace ws_\w+; the earlier demo workspace ws_\w+ stays, its demo keys revoked\./);
      expect(await firstCourse(changed.output())).toMatch(/^Two mornings of twice edited first aid/);
      expect(await changed.stop()).toBe(0);

      await write('src/demo/demo-fixture.json', fixture.replace('"role": "owner"', '"role": "chief"'));
      const broken = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, mistakes.scratch).then(
        async (server) => `started: ${await server.stop()}`,
        (error: unknown) => String(error),
      );
      expect(broken).toContain('Start failed: src/demo/demo-fixture.json does not fit the migrations: the demo workspace is imported from it, and it is refused:');
      expect(broken).toContain('members[0] (ref "m-owner"): role "chief"');
      expect(broken).not.toMatch(STACK_FRAME);
    } finally {
      await restore();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 300_000);

  describeWhere(missingFor('postgres'), 'with DEMO=true on a real PostgreSQL', () => {
    it('a demo fixture edited since the demo workspace was imported is imported again at the next start, which says so and revokes the earlier demo keys', async () => {
      const database = await openSharedDatabase('postgres');
      const env = { ...database.env, DEMO: 'true' };
      const workspaceOf = (banner: string) => /Demo workspace (\S+)/.exec(banner)![1];
      try {
        const first = await startServerProcess(env, mistakes.scratch);
        expect(first.output()).not.toContain('changed since');
        expect(await first.stop()).toBe(0);

        // Unchanged since: the same workspace, no notice.
        const again = await startServerProcess(env, mistakes.scratch);
        expect(again.output()).not.toContain('changed since');
        expect(workspaceOf(again.output())).toBe(workspaceOf(first.output()));
        const earlierKey = fullKeyOf(again.output());
        expect(await again.stop()).toBe(0);

        await write('src/demo/demo-fixture.json', title('Two mornings of edited first aid'));
        const changed = await startServerProcess(env, mistakes.scratch);
        expect(changed.output()).toContain(
          `src/demo/demo-fixture.json changed since the demo workspace ${workspaceOf(first.output())} was imported: imported it again as workspace ${workspaceOf(changed.output())}; the earlier demo workspace stays, its demo keys revoked.`,
        );
        expect(workspaceOf(changed.output())).not.toBe(workspaceOf(first.output()));
        expect(await firstCourse(changed.output())).toMatch(/^Two mornings of edited first aid/);
        expect((await coursesOf(changed.output(), earlierKey)).status).toBe(401);
        expect(await changed.stop()).toBe(0);

        // The next start keeps the new workspace.
        const kept = await startServerProcess(env, mistakes.scratch);
        expect(kept.output()).not.toContain('changed since');
        expect(workspaceOf(kept.output())).toBe(workspaceOf(changed.output()));
        expect(await kept.stop()).toBe(0);
      } finally {
        await database.close();
        await restore();
      }
    }, 300_000);
  });

  // Last: its failed build leaves the scratch copy's dist compiled from the planted migration's catalog.
  it('a NOT NULL column without a default: the build names the demo fixture, the column and a DEFAULT; a database with rows refuses the migration with the same advice at start, and takes it with the DEFAULT', async () => {
    await write(MIGRATION, '-- Up Migration\nALTER TABLE bookings ADD COLUMN channel text NOT NULL;\n\n-- Down Migration\nALTER TABLE bookings DROP COLUMN channel;\n');
    expect((await npm('generate')).code).toBe(0);
    // The one whole npm run build of the planted mistakes: its compile runs, and its step that
    // checks the demo fixture stops it (maintainer-mistakes-in-the-build.test.ts runs that step alone).
    const built = refused(await npm('build'));
    expect(built).toContain('src/demo/demo-fixture.json does not fit the migrations');
    expect(built).toMatch(/bookings\[0\] \(ref "b1"\) and \d+ more: channel is missing: the column bookings\.channel is NOT NULL and has no default/);
    expect(built).toContain('Give it a DEFAULT in its migration (ALTER TABLE bookings ADD COLUMN channel text NOT NULL DEFAULT <value>)');
    expect(built).not.toContain('Invalid input');

    // A data directory that has bookings (the previous build's template, with the demo) refuses it at start.
    const dataDir = await mkdtemp(join(tmpdir(), 'maintainer-mistakes-data-'));
    try {
      const started = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, mistakes.scratch).then(
        async (server) => `started: ${await server.stop()}`,
        (error: unknown) => String(error),
      );
      expect(started).toContain(`Start failed: ${MIGRATION} cannot be applied to this database: the column bookings.channel is NOT NULL, and rows of bookings that exist have no value for it`);
      expect(started).toContain('Give it a DEFAULT in the migration');
      expect(started).not.toMatch(STACK_FRAME);

      // The way out: the column with a default, which the same database then takes (a default is
      // no part of what a start compares with the build's catalog, so this build serves it).
      await write(MIGRATION, "-- Up Migration\nALTER TABLE bookings ADD COLUMN channel text NOT NULL DEFAULT 'web';\n\n-- Down Migration\nALTER TABLE bookings DROP COLUMN channel;\n");
      const server = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' }, mistakes.scratch);
      expect(server.output()).toContain('Demo workspace ws_');
      expect(await server.stop()).toBe(0);
    } finally {
      await restore();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 300_000);

  it('leaves the repository it copied untouched', async () => {
    for (const file of GENERATED) expect(await readFile(join(ROOT, file), 'utf8')).toBe(originals.get(file));
  });
});
