import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.ts';

/** Debian's PgBouncer (`apt-get install pgbouncer`; `.ci/run` installs it). */
export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((path) => existsSync(path)) ?? null;

export interface PgBouncer {
  /** `url` with the host and port of PgBouncer instead of PostgreSQL's. */
  urlFor(url: string): string;
  /** `SHOW CLIENTS` on PgBouncer's console: the application name of every client connected. */
  clientApplications(): Promise<string[]>;
  /** Everything PgBouncer logged. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer in front of the PostgreSQL of `serverUrl`: `pool_mode = transaction` and every
 * other pooling setting at its default (no `ignore_startup_parameters`), trust authentication
 * for the URL's user, and that user on the read-only console (`stats_users`). PgBouncer refuses to
 * run as root: as root it switches to the `postgres` user.
 */
export async function startPgBouncer(serverUrl: string): Promise<PgBouncer> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed');
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username) || 'postgres';
  const dir = await mkdtemp(join(tmpdir(), 'pgbouncer-'));
  await chmod(dir, 0o777);
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  await writeFile(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  await writeFile(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `stats_users = ${user}`,
      'pool_mode = transaction',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), ini], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = async () => `${output}${await readFile(join(dir, 'pgbouncer.log'), 'utf8').catch(() => '')}`;
  const consoleUrl = `postgresql://${encodeURIComponent(user)}@127.0.0.1:${port}/pgbouncer`;
  // Ready once its console answers.
  for (let attempt = 0; ; attempt += 1) {
    const probe = new pg.Client({ connectionString: consoleUrl });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.end();
      break;
    } catch (error) {
      if (attempt > 100 || child.exitCode !== null) throw new Error(`pgbouncer did not start: ${String(error)}\n${await log()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    urlFor(url) {
      const through = new URL(url);
      through.hostname = '127.0.0.1';
      through.port = String(port);
      return through.toString();
    },
    async clientApplications() {
      // The console speaks the simple query protocol only: a statement without values.
      const client = new pg.Client({ connectionString: consoleUrl });
      await client.connect();
      try {
        return (await client.query<{ application_name: string | null }>('SHOW CLIENTS')).rows.map((row) => row.application_name ?? '');
      } finally {
        await client.end();
      }
    },
    log,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
