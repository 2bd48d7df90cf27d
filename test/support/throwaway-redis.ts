import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { freePort } from './free-port.ts';

/** The machine's Redis server binary, or null. */
export const REDIS_SERVER = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((path) => existsSync(path)) ?? null;

/** A Redis server of the test's own on a free port, so that the machine's shared one is never stopped. */
export class ThrowawayRedis {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
  ) {}

  static async start(): Promise<ThrowawayRedis> {
    if (!REDIS_SERVER) throw new Error('redis-server is not installed');
    const port = await freePort();
    const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const started = Date.now();
    while (!(await answers(port))) {
      if (Date.now() - started > 10_000) {
        child.kill('SIGKILL');
        throw new Error('redis-server did not start within 10 s');
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return new ThrowawayRedis(`redis://127.0.0.1:${port}`, child);
  }

  /** Stops it at once, as a crash would. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.end('PING\r\n');
      socket.once('data', (data) => resolve(data.toString().startsWith('+PONG')));
    });
    socket.once('error', () => resolve(false));
  });
}
