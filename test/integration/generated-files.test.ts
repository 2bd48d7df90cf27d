import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogDifferences, readCatalog, type Catalog } from '../../src/model/catalog.ts';
import { catalog as committed } from '../../src/model/catalog.generated.ts';
import { CATALOG_FILE, SDL_FILE, WATCHED_TABLES_FILE, generatedFiles, migratedCatalog, staleFiles, type GeneratedFile } from '../../schema/generated-files.ts';
import { openTestDatabase } from '../support/databases.ts';
import { describeWhere, missingFor } from '../support/variants.ts';

const ROOT = new URL('../../', import.meta.url);

describe('the generated files (npm run generate)', () => {
  let migrated: Catalog;
  let files: GeneratedFile[];
  let scratch: string;

  beforeAll(async () => {
    migrated = await migratedCatalog();
    files = await generatedFiles(migrated);
    scratch = await mkdtemp(join(tmpdir(), 'generated-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  /** The committed files, each changed by `plant`, in a scratch root: what staleFiles says of them. */
  const planted = async (path: string, plant: (text: string) => string) => {
    for (const file of files) {
      await mkdir(join(scratch, file.path, '..'), { recursive: true });
      const text = await readFile(new URL(file.path, ROOT), 'utf8');
      await writeFile(join(scratch, file.path), file.path === path ? plant(text) : text);
    }
    return staleFiles(pathToFileURL(`${scratch}/`), files);
  };

  it('are committed exactly as they are generated from the migrations, the overlay and the fixed operations now', async () => {
    expect(await staleFiles(ROOT, files), 'run npm run generate').toEqual([]);
  });

  it('a catalog that disagrees with the migrations is stale, each column named', async () => {
    const stale = await planted(CATALOG_FILE, (text) =>
      text.replace('{"name":"duration_minutes","type":"integer"', '{"name":"duration_minutes","type":"text"').replace(/\n\s*\{"name":"location","type":"text"[^\n]*\},?/, ''),
    );
    expect(stale).toEqual([
      {
        path: CATALOG_FILE,
        differences: [
          'column sessions.duration_minutes: of type text, expected integer in the file, against the migrations',
          'column sessions.location: missing in the file, against the migrations',
        ],
      },
    ]);
  });

  it('the build fails, naming the operation and the table, while a cached operation reads a table the committed triggers do not watch', async () => {
    // As the file was before sessions were read: the operations read them now, the triggers do not follow.
    const stale = await planted(WATCHED_TABLES_FILE, (text) => text.replace(/\n-- sessions: [\s\S]*?(?=\n-- |$)/, '\n'));
    expect(stale).toHaveLength(1);
    expect(stale[0]!.path).toBe(WATCHED_TABLES_FILE);
    expect(stale[0]!.differences).toEqual([
      expect.stringMatching(/^the cached operation courses \(src\/graphql\/operations\.ts\) reads sessions \(.*starts_at.*\), which the answer cache does not watch: .* Run npm run generate/),
      expect.stringMatching(/^the cached operation coursesOfRuns \(src\/graphql\/operations\.ts\) reads sessions /),
    ]);
  });

  it('a field in the SDL that is not served, and a served field the SDL lacks, are named', async () => {
    const stale = await planted(SDL_FILE, (text) => text.replace(/(type Session \{\n)/, '$1  nickname: String\n').replace(/\n {2}location: String!\n/, '\n'));
    expect(stale).toHaveLength(1);
    expect(stale[0]!.path).toBe(SDL_FILE);
    expect(stale[0]!.differences).toEqual([
      'Session.nickname: in schema/internal.graphql but not served (not in the catalog or hidden by the overlay)',
      'Session.location: served but not in schema/internal.graphql',
    ]);
  });

  describeWhere(missingFor('postgres'), 'on PostgreSQL', () => {
    it('the migrations give PostgreSQL the catalog the build was generated from', async () => {
      const db = await openTestDatabase('postgres');
      try {
        expect(catalogDifferences(committed, await readCatalog(db))).toEqual([]);
      } finally {
        await db.close();
      }
    });
  });
});
