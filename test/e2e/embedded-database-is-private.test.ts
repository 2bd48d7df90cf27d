import { execFile, spawnSync } from 'node:child_process';
import { chmod, lstat, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { ADMIN_ARGUMENTS, ROOT } from '../support/service-commands.ts';

/** Every path under `dir` whose mode gives the group or others any access. */
async function openToOthers(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if ((await lstat(path)).mode & 0o077) found.push(path);
    if (entry.isDirectory()) found.push(...(await openToOthers(path)));
  }
  return found;
}

const mode = async (path: string) => ((await stat(path)).mode & 0o777).toString(8);

/** The connection the running server published for other processes of its user. */
async function published(dataDir: string): Promise<URL> {
  const lock = JSON.parse(await readFile(join(dataDir, 'lock'), 'utf8')) as { connectionString: string };
  return new URL(lock.connectionString);
}

/** What `cmd` printed and how it ended, whether it succeeded or not. */
async function outcomeOf(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(cmd, args, { cwd: '/', encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** Another local user's attempt needs root (to become `nobody`), runuser and psql. */
const asAnotherUser = process.getuid?.() === 0 && spawnSync('runuser', ['--help']).status === 0 && spawnSync('psql', ['--version']).status === 0;
if (!asAnotherUser) {
  console.warn('embedded database privacy: the connection attempt of another local user not run: it needs root, runuser and psql (apt-get install postgresql-client; .ci/run installs it)');
}

/** psql as user `nobody`, on the socket in `directory`, reading what an intruder would want. */
const psqlAsNobody = (directory: string) =>
  outcomeOf('runuser', ['-u', 'nobody', '--', 'psql', '-h', directory, '-U', 'postgres', '-d', 'postgres', '-Atc', 'SELECT count(*) FROM api_keys']);

describe('the embedded database of a running npm start', () => {
  let dataDir: string;
  let server: ServerProcess | null = null;

  beforeAll(async () => {
    dataDir = join(await mkdtemp(join(tmpdir(), 'private-')), 'data');
    server = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' });
  });
  afterAll(async () => {
    await server?.stop();
    await rm(join(dataDir, '..'), { recursive: true, force: true });
  });

  it('keeps its data directory 0700 and no file in it open to the group or others', async () => {
    expect(await mode(dataDir)).toBe('700');
    expect(await mode(join(dataDir, 'lock'))).toBe('600');
    expect(await openToOthers(dataDir)).toEqual([]);
  });

  it('listens on a Unix socket in a directory of its own user only, not on a TCP port', async () => {
    const url = await published(dataDir);
    const directory = url.searchParams.get('host')!;
    expect(directory).toMatch(/^\//);
    expect(await mode(directory)).toBe('700');
    expect((await stat(directory)).uid).toBe(process.getuid!());
    expect((await stat(join(directory, '.s.PGSQL.5432'))).isSocket()).toBe(true);
    expect(await mode(join(directory, '.s.PGSQL.5432'))).toBe('600');
    // Nothing to prove but being this user: no password to leak.
    expect(url.password).toBe('');
  });

  it.runIf(asAnotherUser)('lets no other local user connect: nobody is refused at the socket, and only the file modes keep them out', async () => {
    const directory = (await published(dataDir)).searchParams.get('host')!;
    const socket = join(directory, '.s.PGSQL.5432');
    const refused = await psqlAsNobody(directory);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/\.s\.PGSQL\.5432.*Permission denied/);
    expect(refused.stdout).toBe('');
    // Either mode alone keeps nobody out: with only the directory opened, nobody is still refused.
    await chmod(directory, 0o755);
    try {
      expect((await psqlAsNobody(directory)).stderr).toMatch(/Permission denied/);
      // With the socket opened too, the same attempt gets in: the refusals above are the modes' doing.
      await chmod(socket, 0o777);
      const admitted = await psqlAsNobody(directory);
      expect(admitted).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\n$/) });
    } finally {
      await chmod(socket, 0o600);
      await chmod(directory, 0o700);
    }
    expect((await psqlAsNobody(directory)).stderr).toMatch(/Permission denied/);
  });

  it('the operator CLI still reaches the running server\'s database, through the same socket', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [...ADMIN_ARGUMENTS, 'workspace', 'create', '--name', 'Through the socket', '--json'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, DATA_DIR: dataDir },
    });
    expect(JSON.parse(stdout)).toEqual({ id: expect.stringMatching(/^ws_/) });
    // What the CLI wrote through the server left no file open to others either.
    expect(await openToOthers(dataDir)).toEqual([]);
  });

  it('a data directory an older version left open is closed again at start, and the socket is gone after stop', async () => {
    const { host } = Object.fromEntries((await published(dataDir)).searchParams);
    expect(await server!.stop()).toBe(0);
    server = null;
    await expect(stat(host!)).rejects.toThrow(/ENOENT/);
    await expect(stat(join(dataDir, 'lock'))).rejects.toThrow(/ENOENT/);
    // As an older version (or a permissive umask) left it: everything readable and writable by all.
    const open = async (dir: string): Promise<void> => {
      await chmod(dir, 0o777);
      for (const entry of await readdir(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) await open(join(dir, entry.name));
        else await chmod(join(dir, entry.name), 0o666);
      }
    };
    await open(dataDir);
    server = await startServerProcess({ DATA_DIR: dataDir, DEMO: 'true' });
    expect(await mode(dataDir)).toBe('700');
    expect(await openToOthers(dataDir)).toEqual([]);
  });
});
