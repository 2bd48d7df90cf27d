import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP relay between a client and a server that can go silent the way a partitioned network or
 * a stalled pooler does: while silent it forwards nothing in either direction and closes nothing,
 * so neither side hears a refusal or a reset; connections opened meanwhile are accepted and hang
 * too. Once it speaks again, new connections are forwarded as before.
 */
export class SilentRelay {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #silent = false;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(target: { host: string; port: number }): Promise<SilentRelay> {
    const server = createServer();
    const relay = new SilentRelay(server);
    server.on('connection', (client) => relay.#relay(client, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** `url` with its host and port replaced by the relay's. */
  through(url: string): string {
    const via = new URL(url);
    via.hostname = '127.0.0.1';
    via.port = String(this.port);
    return via.toString();
  }

  silence(): void {
    this.#silent = true;
  }

  speak(): void {
    this.#silent = false;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #relay(client: Socket, target: { host: string; port: number }): void {
    // A connection that arrives while silent hangs for good: nothing of it is ever forwarded.
    const mute = this.#silent;
    const server = connect(target.port, target.host);
    for (const socket of [client, server]) {
      this.#sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => this.#sockets.delete(socket));
    }
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        if (!mute && !this.#silent) to.write(chunk);
      });
    forward(client, server);
    forward(server, client);
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  }
}
