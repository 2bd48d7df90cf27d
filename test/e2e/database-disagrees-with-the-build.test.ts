import { expect, it } from 'vitest';
import { openSharedDatabase } from '../support/databases.ts';
import { startServerProcess } from '../support/server-process.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/**
 * The catalog a build was made from (src/model/catalog.generated.ts) is what its statements are
 * generated from: a database that disagrees with it (a column altered or dropped by hand, a
 * database of another release) stops the start, naming every difference, instead of failing the
 * first query that reads it.
 */
describeOnEachDatabase('a database that disagrees with the build, on %s', (target) => {
  it('stops the start with a message naming each table and column, and starts once they agree again', async () => {
    const shared = await openSharedDatabase(target, 3);
    try {
      await shared.db.query('ALTER TABLE sessions ALTER COLUMN location DROP NOT NULL');
      await shared.db.query('ALTER TABLE participants RENAME COLUMN email TO e_mail');
      await shared.db.query('ALTER TABLE course_templates ALTER COLUMN revision TYPE bigint');
      const refused = await startServerProcess(shared.env).then(
        async (server) => {
          await server.stop();
          return null;
        },
        (error: unknown) => String(error),
      );
      expect(refused).toContain('The database disagrees with the catalog this build was made from (src/model/catalog.generated.ts)');
      expect(refused).toContain('column sessions.location: nullable, expected not null');
      expect(refused).toContain('column participants.email: missing');
      expect(refused).toContain('column participants.e_mail: not expected');
      expect(refused).toContain('column course_templates.revision: of type bigint, expected integer');
      expect(refused).not.toMatch(/\n\s+at /);

      await shared.db.query('ALTER TABLE sessions ALTER COLUMN location SET NOT NULL');
      await shared.db.query('ALTER TABLE participants RENAME COLUMN e_mail TO email');
      await shared.db.query('ALTER TABLE course_templates ALTER COLUMN revision TYPE integer');
      const server = await startServerProcess(shared.env);
      expect(await server.stop()).toBe(0);
    } finally {
      await shared.close();
    }
  });
});
