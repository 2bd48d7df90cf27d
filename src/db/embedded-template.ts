import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packagePath } from '../package-root.ts';
import type { Queryable } from './database.ts';

/**
 * A first start of the embedded database copies a cluster prepared by `npm run build` (migrated,
 * the demo workspace imported, no keys) instead of running PostgreSQL's initdb, every migration
 * and the demo import: they cost a newcomer's first start seconds that the copy does not.
 */
export const EMBEDDED_TEMPLATE_PATH = packagePath('dist', 'embedded-template.tar');

/** The template to start `dataDir`'s cluster from: only when it has none yet and the build made one. */
export async function embeddedTemplateFor(dataDir: string): Promise<Blob | undefined> {
  if (dataDir.startsWith('memory://') || existsSync(join(dataDir, 'pgdata')) || !existsSync(EMBEDDED_TEMPLATE_PATH)) return undefined;
  return new Blob([await readFile(EMBEDDED_TEMPLATE_PATH)]);
}

/**
 * What must differ between two installations started from the same template: the secret that
 * tags API keys and feed tokens (migration 1763800900000) is made anew, so that no two data
 * directories, and nobody who reads the package, share it.
 */
export async function personaliseTemplateCopy(db: Queryable): Promise<void> {
  await db.query('UPDATE credential_issuer_key SET key = $1 WHERE id = 1', [randomBytes(32)]);
}
