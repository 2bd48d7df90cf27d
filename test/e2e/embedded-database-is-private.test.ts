import { execFile } from 'node:child_process';
import { chmod, lstat, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
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

/** A startup message, then a query without answering the password request: what comes back. */
function queryWithoutPassword(socketPath: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(socketPath, () => {
      const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
      const startup = Buffer.alloc(8);
      startup.writeInt32BE(8 + params.length, 0);
      startup.writeInt32BE(196_608, 4);
      const sql = Buffer.from('SELECT key_hash FROM api_keys\0');
      const query = Buffer.alloc(5);
      query.write('Q', 0);
      query.writeInt32BE(4 + sql.length, 1);
      socket.write(Buffer.concat([startup, params]));
      setTimeout(() => socket.write(Buffer.concat([query, sql])), 100);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

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
    expect(url.password.length).toBeGreaterThanOrEqual(24);
  });

  it('refuses a client without the password: a wrong one fails SCRAM, and a query sent without answering gets only an authentication error', async () => {
    const url = await published(dataDir);
    const directory = url.searchParams.get('host')!;
    const intruder = new pg.Client({ host: directory, user: 'postgres', database: 'postgres', password: 'not-the-password' });
    await expect(intruder.connect()).rejects.toThrow(/password authentication failed/);
    await intruder.end().catch(() => {});

    const answer = await queryWithoutPassword(join(directory, '.s.PGSQL.5432'));
    // AuthenticationSASL, then an ErrorResponse with SQLSTATE 28P01, then the connection closes: no row.
    expect(answer.subarray(0, 1).toString()).toBe('R');
    expect(answer.readInt32BE(5)).toBe(10);
    expect(answer.toString('latin1')).toContain('C28P01');
    expect(answer.toString('latin1')).not.toMatch(/key_hash|RowDescription|SELECT \d/);
  });

  it('the operator CLI still reaches the running server\'s database, through the same socket and password', async () => {
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
