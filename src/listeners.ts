import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Config } from './config.ts';
import { ApiError } from './errors.ts';
import { rawErrorAnswer } from './http-answers.ts';

const answerRaw = (socket: Duplex, error: ApiError) => socket.end(rawErrorAnswer(error));

/**
 * A listener that cuts slow clients off when the configuration says: Node checks the header and
 * request timeouts every `connectionsCheckingInterval` (30 s by default), so the check runs at
 * least every second (a quarter of the shorter timeout, for short ones). At most MAX_CONNECTIONS
 * connections are open at once; further ones are closed as they arrive. Requests Node's parser
 * refuses (a malformed request line, control characters, headers over 16 KiB) never reach the app:
 * they still get the contract's error shape, then the connection closes; so do requests whose
 * headers or whole request did not arrive in time (408), and CONNECT (405).
 */
export function createListener(config: Config, app: RequestListener): Server {
  const shorter = Math.min(config.HEADERS_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS);
  // The latest answer of each connection: a refusal is never written into one begun and not finished.
  const answering = new WeakMap<Duplex, ServerResponse>();
  const server = createServer(
    {
      maxHeaderSize: 16 * 1024,
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      requestTimeout: config.REQUEST_TIMEOUT_MS,
      keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(shorter / 4))),
    },
    (req: IncomingMessage, res: ServerResponse) => {
      answering.set(req.socket, res);
      app(req, res);
    },
  );
  server.maxConnections = config.MAX_CONNECTIONS;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const answer = answering.get(socket);
    if (error.code === 'ECONNRESET' || !socket.writable || (answer?.headersSent && !answer.writableFinished)) {
      socket.destroy();
      return;
    }
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') answerRaw(socket, new ApiError('request_timeout'));
    else answerRaw(socket, new ApiError('invalid_request', 'The request could not be parsed.'));
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) =>
    answerRaw(socket, new ApiError('method_not_allowed', undefined, { headers: { Allow: 'GET, HEAD' } })),
  );
  return server;
}

/** The settings a listener's address comes from, named when it cannot listen there. */
export interface AddressSettings {
  port: 'PORT' | 'INTERNAL_PORT';
  host: 'HOST' | 'INTERNAL_HOST';
}

/**
 * Listens; a port in use or not allowed, or a host that is not this machine's, is said with the
 * setting that moves it (a newcomer whose port 3000 is taken reads `PORT`, not an errno).
 */
export function listen(server: Server, port: number, host: string, settings: AddressSettings): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (error.code === 'EADDRINUSE') reject(new Error(`${where} is in use by another program: set ${settings.port} to a free port (or stop the other program).`));
      else if (error.code === 'EACCES') reject(new Error(`${where} may not be used by this user: set ${settings.port} to a port above 1023.`));
      else if (error.code === 'EADDRNOTAVAIL') reject(new Error(`${settings.host} ${host} is not an address of this machine: set ${settings.host} to one of its addresses (127.0.0.1, or 0.0.0.0 for every interface).`));
      else reject(error);
    };
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve(server.address() as AddressInfo);
    });
  });
}

export function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

export async function closeServer(server: Server): Promise<void> {
  // Connections a client opened before the shutdown may still wait in the accept backlog of a busy
  // process: two turns of the event loop accept them and read their requests, so that closing the
  // listener neither resets them nor takes them for idle connections.
  await nextTurn();
  await nextTurn();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
