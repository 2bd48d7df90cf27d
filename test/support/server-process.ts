import { spawn, type ChildProcess } from 'node:child_process';

const ROOT = new URL('../..', import.meta.url).pathname;

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `src/main.ts` as its own process and waits until it serves. */
export function startServerProcess(env: Record<string, string | undefined>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, PORT: '0', INTERNAL_PORT: '0', DEMO: 'false', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in time:\n${text}`)), 60_000);
    const onData = () => {
      const match = /\(Beta\) on (http:\/\/\S+)/.exec(text);
      if (!match) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({
        child,
        url: match[1]!,
        output: () => text,
        async stop() {
          if (child.exitCode === null) child.kill('SIGTERM');
          return exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code}:\n${text}`));
    });
  });
}

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: the worker dies in the middle of whatever it does. */
  kill(): Promise<void>;
}

/** Starts `admin -- worker` as its own process and waits until its worker runs. */
export function startWorkerProcess(env: Record<string, string | undefined>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'worker'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker did not start in time:\n${text}`)), 60_000);
    const onData = () => {
      if (!text.includes('webhook worker started')) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolve({
        child,
        output: () => text,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          return exited;
        },
        async kill() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          await exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited with ${code}:\n${text}`));
    });
  });
}
