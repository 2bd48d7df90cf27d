import { execFile } from 'node:child_process';
import { cp, mkdtemp, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './service-commands.ts';

const run = promisify(execFile);

/**
 * A copy of the repository as a maintainer has it (its files, committed or not, ignored ones
 * left out), with the installed packages linked and the current build copied: what the tests that
 * edit migrations, the overlay or the demo fixture work on.
 */
export async function scratchCopy(prefix: string): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), prefix));
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  // A node_modules that is a symlink is no directory, so .gitignore's node_modules/ does not leave it out.
  for (const file of stdout.split('\0').filter((path) => path && path !== 'node_modules')) {
    await cp(join(ROOT, file), join(scratch, file), { recursive: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  await symlink(join(ROOT, 'node_modules'), join(scratch, 'node_modules'));
  await cp(join(ROOT, 'dist'), join(scratch, 'dist'), { recursive: true });
  return scratch;
}

/**
 * A command's outcome, run in `cwd` as a newcomer runs it (the embedded database, whatever the
 * run's settings name); a failing command's output is returned, not thrown.
 */
export async function shell(cwd: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; output: string }> {
  const { DATABASE_URL: _database, REDIS_URL: _redis, ...inherited } = process.env;
  try {
    const { stdout, stderr } = await run(command, args, { cwd, env: { ...inherited, ...env }, maxBuffer: 32 * 1024 * 1024 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** A stack trace's frame, as Node prints them: what no maintainer's mistake may end in. */
export const STACK_FRAME = /\n\s+at .+[(:]\d+/;
