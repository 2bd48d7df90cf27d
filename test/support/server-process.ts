import { spawn, type ChildProcess } from 'node:child_process';
import { ADMIN_ARGUMENTS, ROOT, START_ARGUMENTS } from './service-commands.ts';

interface StartedProcess {
  child: ChildProcess;
  /** Everything the process wrote, stdout and stderr together. */
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: the process dies in the middle of whatever it does. */
  kill(): Promise<void>;
}

export interface ServerProcess extends StartedProcess {
  url: string;
}

export type WorkerProcess = StartedProcess;

/**
 * Starts `node <args>` from the repository root and resolves once `ready` finds what it waits for in
 * stdout; rejects if the process exits first, or kills it and rejects when it takes longer than a minute.
 */
function startProcess<T>(what: string, args: string[], env: Record<string, string | undefined>, ready: (stdout: string) => T | null, cwd = ROOT): Promise<StartedProcess & { ready: T }> {
  const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const running = () => child.exitCode === null && child.signalCode === null;
  return new Promise((resolve, reject) => {
    // A process that never becomes ready is killed, so that it cannot outlive the test writing into its data directory.
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      child.kill('SIGKILL');
    }, 60_000);
    const onData = () => {
      const found = ready(text);
      if (found === null) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({
        child,
        ready: found,
        output: () => text,
        async stop() {
          if (running()) child.kill('SIGTERM');
          return exited;
        },
        async kill() {
          if (running()) child.kill('SIGKILL');
          await exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(late ? `the ${what} did not start in time:\n${text}` : `the ${what} exited with ${code}:\n${text}`));
    });
  });
}

/** Starts the service as `npm start` does (from `cwd`, the repository by default), as its own process, and waits until it serves. */
export async function startServerProcess(env: Record<string, string | undefined>, cwd = ROOT): Promise<ServerProcess> {
  const started = await startProcess(
    'server',
    START_ARGUMENTS,
    { PATH: process.env.PATH, PORT: '0', INTERNAL_PORT: '0', DEMO: 'false', LOG_LEVEL: 'info', ...env },
    (stdout) => /\(Beta\) on (http:\/\/\S+)/.exec(stdout)?.[1] ?? null,
    cwd,
  );
  return Object.assign(started, { url: started.ready });
}

/** Starts `admin -- worker` as its own process and waits until its worker runs. */
export function startWorkerProcess(env: Record<string, string | undefined>): Promise<WorkerProcess> {
  return startProcess('worker', [...ADMIN_ARGUMENTS, 'worker'], { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env }, (stdout) =>
    stdout.includes('webhook worker started') ? true : null,
  );
}
