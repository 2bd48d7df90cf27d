import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * PGlite is one process's database: its files must never be opened twice. The process that opens
 * them holds `DATA_DIR/lock` (its pid and, for a server, the address of its socket),
 * so that another process (an `admin` command while `npm start` runs) connects through that
 * socket instead. The file is readable by the service's user alone (mode 0600).
 */
export interface EmbeddedLockInfo {
  pid: number;
  /** How to reach a serving process's database (its socket's directory), when it offers it to others. */
  connectionString?: string;
}

const LOCK_FILE = 'lock';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function readLiveLock(dataDir: string): Promise<EmbeddedLockInfo | null> {
  try {
    const info = JSON.parse(await readFile(join(dataDir, LOCK_FILE), 'utf8')) as EmbeddedLockInfo;
    if (typeof info.pid === 'number' && info.pid !== process.pid && isAlive(info.pid)) return info;
    return null;
  } catch {
    return null;
  }
}

export async function acquireLock(dataDir: string): Promise<void> {
  const path = join(dataDir, LOCK_FILE);
  try {
    await writeFile(path, JSON.stringify({ pid: process.pid }), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const holder = await readLiveLock(dataDir);
    if (holder) throw new Error(`The embedded database in ${dataDir} is in use by process ${holder.pid}`);
    // A stale lock from a process that died.
    await writeFile(path, JSON.stringify({ pid: process.pid }), { mode: 0o600 });
    await chmod(path, 0o600);
  }
}

export async function publishConnection(dataDir: string, connectionString: string): Promise<void> {
  const path = join(dataDir, LOCK_FILE);
  await chmod(path, 0o600);
  await writeFile(path, JSON.stringify({ pid: process.pid, connectionString }));
}

export async function releaseLock(dataDir: string): Promise<void> {
  const holder = await readFile(join(dataDir, LOCK_FILE), 'utf8').catch(() => null);
  if (holder && (JSON.parse(holder) as EmbeddedLockInfo).pid === process.pid) {
    await rm(join(dataDir, LOCK_FILE), { force: true });
  }
}
