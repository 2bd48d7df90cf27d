import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packagePath } from '../package-root.ts';
import type { Queryable } from './database.ts';
import { ensurePrivateDirectory } from './private-files.ts';

/**
 * A first start of the embedded database copies a cluster prepared by `npm run build` (migrated,
 * the demo workspace imported, no keys) instead of running PostgreSQL's initdb, every migration
 * and the demo import: they cost a newcomer's first start seconds that a file copy does not.
 * The cluster is kept as its directory of files and copied by the system's `cp` (the embedded
 * database runs on POSIX systems only): loading it as an archive through PGlite's file system cost
 * about 0.9 s more than opening a copy, and Node's `fs.cp` took 0.4–1.2 s where `cp` takes 0.1 s.
 */
export const EMBEDDED_TEMPLATE_DIR = packagePath('dist', 'embedded-template');

/** What the build says of the template beside it: the SHA-256 of the demo fixture it imported. */
export const EMBEDDED_TEMPLATE_INFO = packagePath('dist', 'embedded-template.json');

export interface TemplateInfo {
  demoFixtureSha256: string;
}

/** The template's info, or null without a template (a build that could not make one, or none yet). */
export async function readTemplateInfo(): Promise<TemplateInfo | null> {
  return templateInfoNow();
}

function templateInfoNow(): TemplateInfo | null {
  if (!existsSync(join(EMBEDDED_TEMPLATE_DIR, 'PG_VERSION'))) return null;
  try {
    return JSON.parse(readFileSync(EMBEDDED_TEMPLATE_INFO, 'utf8')) as TemplateInfo;
  } catch {
    return null;
  }
}

/**
 * Copies the template into `dataDir` when it has no cluster yet, the build made one and `accept`
 * takes it (a template of another demo fixture is not taken); true when it did. The copy lands under a temporary name and is renamed into place, so that of two starts
 * on one new directory only one cluster is ever put there.
 */
export async function copyEmbeddedTemplate(dataDir: string, accept: (info: TemplateInfo | null) => boolean = () => true): Promise<boolean> {
  const target = join(dataDir, 'pgdata');
  if (dataDir.startsWith('memory://') || existsSync(target) || !existsSync(join(EMBEDDED_TEMPLATE_DIR, 'PG_VERSION'))) return false;
  // Every step up to cp's start is synchronous: src/main.ts starts the copy while the service's
  // modules load, which hold the event loop for most of their time, and each asynchronous step
  // before cp would wait for them.
  if (!accept(templateInfoNow())) return false;
  ensurePrivateDirectory(dataDir);
  const staging = mkdtempSync(join(dataDir, 'pgdata-copy-'));
  try {
    // `-p` keeps the template's modes, which the build's open of the cluster left private; the open
    // of the copy checks every file again (src/db/database.ts) and the data directory is 0700.
    await promisify(execFile)('cp', ['-R', '-p', `${EMBEDDED_TEMPLATE_DIR}/.`, staging]);
    await rename(staging, target);
    return true;
  } catch (error) {
    if (existsSync(target)) return false;
    throw error;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * What must differ between two installations started from the same template: the secret that
 * tags API keys and feed tokens (migration 1763800900000) is made anew, so that no two data
 * directories, and nobody who reads the package, share it.
 */
export async function personaliseTemplateCopy(db: Queryable): Promise<void> {
  await db.query('UPDATE credential_issuer_key SET key = $1 WHERE id = 1', [randomBytes(32)]);
}

/**
 * The end of the template's build, before its cluster closes: a new write-ahead log segment and a
 * checkpoint, so that nothing in the segment of the build's own records (migrations, the demo
 * import: 10 of its 16 MB) is needed any more. Gives the segment in use.
 */
export async function endTemplateLog(db: Queryable): Promise<string> {
  await db.query('SELECT pg_switch_wal()');
  await db.query('CHECKPOINT');
  const { rows } = await db.query<{ segment: string }>('SELECT pg_walfile_name(pg_current_wal_insert_lsn()) AS segment');
  return rows[0]!.segment;
}

/**
 * After `endTemplateLog` and the cluster's close: the template keeps only its segment in use, and
 * that as a sparse file (its pages past the checkpoint are zeros), so that a first start copies
 * 25 MB where it copied 41 (the system's `cp` keeps holes). The other segments are older ones
 * PostgreSQL renamed for reuse; it makes new ones when it needs them.
 */
export async function trimTemplateLog(templateDir: string, inUse: string): Promise<void> {
  const logDir = join(templateDir, 'pg_wal');
  for (const name of await readdir(logDir)) {
    if (/^[0-9A-F]{24}$/.test(name) && name > inUse) await rm(join(logDir, name));
  }
  await rewriteSparse(join(logDir, inUse));
}

const PAGE = 8192;
const ZEROS = Buffer.alloc(PAGE);

/** `path` written again with its all-zero pages left as holes. */
async function rewriteSparse(path: string): Promise<void> {
  const bytes = await readFile(path);
  const partial = `${path}.sparse`;
  const handle = await open(partial, 'w', 0o600);
  try {
    for (let at = 0; at < bytes.length; at += PAGE) {
      const page = bytes.subarray(at, at + PAGE);
      if (!page.equals(ZEROS.subarray(0, page.length))) await handle.write(page, 0, page.length, at);
    }
    await handle.truncate(bytes.length);
  } finally {
    await handle.close();
  }
  await rename(partial, path);
}
