import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';

const run = promisify(execFile);
const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort() : [];

/** The machine's PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup), or null. */
export const POSTGRES_BIN = versions.length > 0 ? `/usr/lib/postgresql/${versions.at(-1)}/bin` : null;
const isRoot = process.getuid?.() === 0;

/**
 * A PostgreSQL server of the test's own in a temporary directory, on a free port, so that the
 * machine's shared server is never stopped. As root, its tools run as the `postgres` user.
 */
export class ThrowawayCluster {
  private constructor(
    readonly dir: string,
    readonly port: number,
    /** Whether this server owns `dir` (a replica shares its primary's). */
    private readonly ownsDir: boolean,
  ) {}

  /** A new primary: initdb (trust authentication, replication allowed from localhost), started. */
  static async create(prefix = 'pg-cluster-'): Promise<ThrowawayCluster> {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    if (isRoot) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: group } = await run('id', ['-g', 'postgres']);
      await chown(dir, Number(stdout), Number(group));
    }
    const cluster = new ThrowawayCluster(dir, await freePort(), true);
    await cluster.pg('initdb', ['-D', cluster.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await cluster.start();
    return cluster;
  }

  /** A streaming replica of this server (`pg_basebackup -R`), in the same directory, started. */
  async createReplica(name = 'replica'): Promise<ThrowawayCluster> {
    const replica = new ThrowawayCluster(this.dir, await freePort(), false);
    replica.name = name;
    await this.pg('pg_basebackup', ['-D', replica.dataDir, '-R', '-X', 'stream', '-c', 'fast', '-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', '--no-sync']);
    await replica.start();
    return replica;
  }

  private name = 'data';

  get dataDir(): string {
    return join(this.dir, this.name);
  }

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async pg(tool: string, args: string[]): Promise<void> {
    const command = join(POSTGRES_BIN!, tool);
    if (isRoot) await run('runuser', ['-u', 'postgres', '--', command, ...args], { cwd: this.dir });
    else await run(command, args, { cwd: this.dir });
  }

  start(): Promise<void> {
    return this.pg('pg_ctl', ['-D', this.dataDir, '-l', `${this.dataDir}.log`, '-w', '-o', `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`, 'start']);
  }

  stop(): Promise<void> {
    return this.pg('pg_ctl', ['-D', this.dataDir, '-m', 'fast', '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => {});
    if (this.ownsDir) await rm(this.dir, { recursive: true, force: true });
  }
}
