import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';

/**
 * The embedded database's socket, reachable only by the service's own user. pglite-socket accepts
 * any client that reaches it as superuser, so its privacy rests where PostgreSQL rests it for its
 * own Unix sockets: the socket lies in a directory of mode 0700 owned by the service's user, which
 * no other user (root aside) can enter, so none can connect. The socket itself is 0600 too, whatever
 * the umask. There is no password to keep.
 *
 * pglite-socket runs every connection on PGlite's one session. Its query queue is patched
 * (patches/@electric-sql+pglite-socket+*.patch, electric-sql/pglite#1046) so that a connection's
 * extended query (Parse, Bind … Sync) runs without another connection's messages in between.
 */
export interface EmbeddedSocket {
  /** A pg connection string naming the socket's directory: for this process and the data directory's lock file. */
  readonly connectionString: string;
  close(): Promise<void>;
}

/** The name PostgreSQL clients look for in a socket directory (port 5432). */
const SOCKET_NAME = '.s.PGSQL.5432';

/** Serves `pglite` to pg clients of this user: see `EmbeddedSocket`. */
export async function serveEmbedded(pglite: PGlite, maxConnections: number): Promise<EmbeddedSocket> {
  if (process.platform === 'win32') {
    throw new Error('The embedded database is served on a Unix socket, which this platform lacks: set DATABASE_URL to a PostgreSQL server');
  }
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  // mkdtemp creates the directory 0700 already; said again because the socket's privacy rests on it.
  const directory = await mkdtemp(join(tmpdir(), 'course-booking-db-'));
  await chmod(directory, 0o700);
  const path = join(directory, SOCKET_NAME);
  const server = new PGLiteSocketServer({ db: pglite, path, maxConnections });
  try {
    await server.start();
    await chmod(path, 0o600);
  } catch (error) {
    await server.stop();
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  return {
    connectionString: `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(directory)}`,
    async close() {
      await server.stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
