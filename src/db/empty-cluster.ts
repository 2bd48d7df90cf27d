import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { packagePath } from '../package-root.ts';
import { loadPGlite } from './pglite-module.ts';

/**
 * A new embedded cluster runs PostgreSQL's initdb, which takes seconds of CPU (tens of seconds on
 * a busy machine); loading the dump of an empty cluster takes about a second. The build steps that
 * open a throwaway cluster (`npm run generate`, the embedded template of `npm run build`) start
 * from such a dump, made once per PGlite build and kept where build tools keep their caches
 * (`node_modules/.cache`). An empty cluster holds nothing of the project: no migration, no row.
 */
const CACHE_DIR = packagePath('node_modules', '.cache', 'course-booking-api');

/** What identifies the PGlite build whose initdb the dump stands for: its package.json. */
async function pgliteBuild(): Promise<string> {
  const require = createRequire(import.meta.url);
  for (let dir = dirname(require.resolve('@electric-sql/pglite')); dirname(dir) !== dir; dir = dirname(dir)) {
    const manifest = await readFile(join(dir, 'package.json'), 'utf8').catch(() => null);
    if (manifest !== null && (JSON.parse(manifest) as { name?: string }).name === '@electric-sql/pglite') {
      return createHash('sha256').update(manifest).digest('hex').slice(0, 16);
    }
  }
  throw new Error('the package.json of @electric-sql/pglite was not found');
}

/**
 * The dump of an empty cluster of the installed PGlite, from the cache or made now and cached.
 * A cache that cannot be written (a read-only install) only costs the initdb it would have saved.
 */
export async function emptyClusterDump(): Promise<Blob> {
  const file = join(CACHE_DIR, `pglite-${await pgliteBuild()}-empty.tar`);
  const cached = await readFile(file).catch(() => null);
  if (cached !== null) return new Blob([cached]);
  const { PGlite } = await loadPGlite();
  const cluster = await PGlite.create();
  let dump: Blob;
  try {
    dump = await cluster.dumpDataDir('none');
  } finally {
    await cluster.close();
  }
  const bytes = Buffer.from(await dump.arrayBuffer());
  // Written whole, then renamed: a reader in another process never sees half a dump.
  const partial = `${file}.${process.pid}.partial`;
  await mkdir(CACHE_DIR, { recursive: true })
    .then(() => writeFile(partial, bytes))
    .then(() => rename(partial, file))
    .catch(() => rm(partial, { force: true }));
  return dump;
}
