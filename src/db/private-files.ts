import { chmodSync, mkdirSync } from 'node:fs';
import { chmod, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The embedded database's data directory holds participant data and key hashes: it is the
 * service user's alone. Created with mode 0700, and tightened to it when an older version (or
 * another umask) left it open.
 */
export function ensurePrivateDirectory(path: string): void {
  // At once: a first start makes it before the copy of the template, which it starts while the
  // service's modules load and hold the event loop (src/db/embedded-template.ts).
  mkdirSync(path, { recursive: true, mode: 0o700 });
  chmodSync(path, 0o700);
}

/**
 * Takes group and other access away from every file and directory under `path`. PGlite writes the
 * files of a new database with mode 0666 whatever the umask (its file system sets the modes it
 * extracted them with); PostgreSQL creates the files it adds later with 0600 itself.
 */
export async function removeGroupAndOtherAccess(path: string): Promise<void> {
  // The entries of a directory at once: a cluster holds a thousand files, and one stat after
  // another cost a start up to a second of waiting on a busy machine.
  const entries = await readdir(path, { withFileTypes: true });
  await Promise.all(
    entries.map(async (entry) => {
      const child = join(path, entry.name);
      if (entry.isSymbolicLink()) return;
      if (entry.isDirectory()) await removeGroupAndOtherAccess(child);
      const mode = (await stat(child)).mode & 0o777;
      if ((mode & 0o077) !== 0) await chmod(child, mode & 0o700);
    }),
  );
}
