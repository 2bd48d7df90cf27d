import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { keepMessageGroupsTogether } from './pglite-message-groups.ts';

/**
 * The embedded database's socket, reachable only by the service's own user: a Unix socket in a
 * directory of mode 0700 (TCP on 127.0.0.1 where Unix sockets are not available), and a random
 * password, new on every start, that each connection proves with SCRAM-SHA-256 before PGlite sees
 * a byte of it. pglite-socket itself accepts any client as superuser; it only ever gets
 * connections that proved the password.
 */
export interface EmbeddedSocket {
  /** A pg connection string with the password: only for this process and the data directory's lock file. */
  readonly connectionString: string;
  close(): Promise<void>;
}

const PROTOCOL_3 = 196_608;
const SSL_REQUEST = 80_877_103;
const GSSENC_REQUEST = 80_877_104;
const MAX_MESSAGE = 10_000;
const AUTHENTICATION_DEADLINE_MS = 10_000;
const ITERATIONS = 4096;

const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();

/** A backend message: type, length (itself included), body. */
function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function authentication(code: number, data: string): Buffer {
  const body = Buffer.alloc(4 + Buffer.byteLength(data));
  body.writeInt32BE(code, 0);
  body.write(data, 4);
  return message('R', body);
}

function fatal(code: string, text: string): Buffer {
  const fields = [`SFATAL`, `VFATAL`, `C${code}`, `M${text}`].map((field) => `${field}\0`).join('');
  return message('E', Buffer.from(`${fields}\0`));
}

/** Reads whole protocol messages from a socket until authentication is over. */
class MessageReader {
  #buffer = Buffer.alloc(0);
  #waiting: (() => void) | null = null;
  #closed = false;

  constructor(socket: Socket) {
    socket.on('data', this.#onData);
    socket.once('close', () => {
      this.#closed = true;
      this.#waiting?.();
    });
  }

  readonly #onData = (chunk: Buffer) => {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    this.#waiting?.();
  };

  detach(socket: Socket): Buffer {
    socket.off('data', this.#onData);
    return this.#buffer;
  }

  async #need(bytes: number): Promise<boolean> {
    while (this.#buffer.length < bytes) {
      if (this.#closed || this.#buffer.length > MAX_MESSAGE) return false;
      await new Promise<void>((resolve) => (this.#waiting = resolve));
      this.#waiting = null;
    }
    return true;
  }

  #take(bytes: number): Buffer {
    const taken = this.#buffer.subarray(0, bytes);
    this.#buffer = this.#buffer.subarray(bytes);
    return taken;
  }

  /** A message without a type byte (startup, SSL request); null when the client gave up or sent nonsense. */
  async untyped(): Promise<{ code: number; bytes: Buffer } | null> {
    if (!(await this.#need(8))) return null;
    const length = this.#buffer.readInt32BE(0);
    if (length < 8 || length > MAX_MESSAGE || !(await this.#need(length))) return null;
    const bytes = this.#take(length);
    return { code: bytes.readInt32BE(4), bytes };
  }

  /** A typed message's body; null when it is not of `type`. */
  async typed(type: string): Promise<Buffer | null> {
    if (!(await this.#need(5))) return null;
    const length = this.#buffer.readInt32BE(1);
    if (this.#buffer.toString('latin1', 0, 1) !== type || length < 4 || length > MAX_MESSAGE || !(await this.#need(length + 1))) return null;
    return this.#take(length + 1).subarray(5);
  }
}

interface Scram {
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

/**
 * SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL speaks it, without channel binding. Resolves
 * to the startup message once the client proved the password, or null (the socket is then ended).
 */
async function authenticate(socket: Socket, reader: MessageReader, scram: Scram): Promise<Buffer | null> {
  let startup: Buffer | null = null;
  while (!startup) {
    const first = await reader.untyped();
    if (!first) return null;
    if (first.code === SSL_REQUEST || first.code === GSSENC_REQUEST) socket.write('N');
    else if (first.code === PROTOCOL_3) startup = first.bytes;
    else return null;
  }
  const refuse = () => {
    socket.end(fatal('28P01', 'password authentication failed for user "postgres"'));
    return null;
  };
  socket.write(authentication(10, 'SCRAM-SHA-256\0\0'));
  const initial = await reader.typed('p');
  if (!initial) return refuse();
  const mechanismEnd = initial.indexOf(0);
  if (mechanismEnd < 0 || initial.toString('utf8', 0, mechanismEnd) !== 'SCRAM-SHA-256') return refuse();
  const clientFirst = initial.subarray(mechanismEnd + 5).toString('utf8');
  const header = /^([ny]),[^,]*,/.exec(clientFirst)?.[0];
  const clientFirstBare = header ? clientFirst.slice(header.length) : '';
  const clientNonce = /(?:^|,)r=([^,]+)/.exec(clientFirstBare)?.[1];
  if (!header || !clientNonce) return refuse();
  const nonce = `${clientNonce}${randomBytes(18).toString('base64')}`;
  const serverFirst = `r=${nonce},s=${scram.salt.toString('base64')},i=${ITERATIONS}`;
  socket.write(authentication(11, serverFirst));
  const response = await reader.typed('p');
  if (!response) return refuse();
  const clientFinal = response.toString('utf8');
  const proofAt = clientFinal.lastIndexOf(',p=');
  if (proofAt < 0) return refuse();
  const withoutProof = clientFinal.slice(0, proofAt);
  if (withoutProof !== `c=${Buffer.from(header).toString('base64')},r=${nonce}`) return refuse();
  const proof = Buffer.from(clientFinal.slice(proofAt + 3), 'base64');
  const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
  const signature = hmac(scram.storedKey, authMessage);
  if (proof.length !== signature.length) return refuse();
  const clientKey = Buffer.from(proof.map((byte, i) => byte ^ signature[i]!));
  if (!timingSafeEqual(createHash('sha256').update(clientKey).digest(), scram.storedKey)) return refuse();
  socket.write(authentication(12, `v=${hmac(scram.serverKey, authMessage).toString('base64')}`));
  return startup;
}

interface SocketServerInternals {
  active: boolean;
  handleConnection(socket: Socket): Promise<void>;
}

/** Serves `pglite` to pg clients that know the password: see `EmbeddedSocket`. */
export async function serveEmbedded(pglite: PGlite, maxConnections: number): Promise<EmbeddedSocket> {
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const password = randomBytes(24).toString('base64url');
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password, salt, ITERATIONS, 32, 'sha256');
  const scram: Scram = { salt, storedKey: createHash('sha256').update(hmac(salted, 'Client Key')).digest(), serverKey: hmac(salted, 'Server Key') };

  // One PGlite backend, many pg connections: pglite-socket queues their statements and keeps a
  // transaction's statements together. It never listens itself: connections reach it only from
  // the listener below, once authenticated (`handleConnection`, its own per-connection setup).
  const backend: PGLiteSocketServer = new PGLiteSocketServer({ db: pglite, maxConnections });
  keepMessageGroupsTogether(backend);
  const internals = backend as unknown as SocketServerInternals;
  if (typeof internals.handleConnection !== 'function' || typeof internals.active !== 'boolean') {
    throw new Error('pglite-socket changed its connection handling; review src/db/embedded-socket.ts');
  }
  internals.active = true;

  // Connections still proving the password: pglite-socket does not know them yet.
  const authenticating = new Set<Socket>();
  const listener: Server = createServer((socket) => {
    authenticating.add(socket);
    socket.on('error', () => socket.destroy());
    const deadline = setTimeout(() => socket.destroy(), AUTHENTICATION_DEADLINE_MS);
    const reader = new MessageReader(socket);
    authenticate(socket, reader, scram)
      .catch(() => null)
      .then((startup) => {
        clearTimeout(deadline);
        authenticating.delete(socket);
        if (!startup || socket.destroyed) {
          socket.end();
          return;
        }
        // PGlite answers the startup message itself (AuthenticationOk, parameters, ready).
        socket.pause();
        socket.unshift(Buffer.concat([startup, reader.detach(socket)]));
        void internals.handleConnection(socket);
        socket.resume();
      });
  });
  listener.maxConnections = maxConnections;

  const unix = process.platform !== 'win32';
  const directory = unix ? await mkdtemp(join(tmpdir(), 'course-booking-db-')) : null;
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    const listening = () => {
      listener.off('error', reject);
      resolve();
    };
    if (directory) listener.listen(join(directory, '.s.PGSQL.5432'), listening);
    else listener.listen(0, '127.0.0.1', listening);
  });
  const connectionString = directory
    ? `postgresql://postgres:${password}@localhost/postgres?host=${encodeURIComponent(directory)}`
    : `postgresql://postgres:${password}@127.0.0.1:${(listener.address() as AddressInfo).port}/postgres?sslmode=disable`;

  return {
    connectionString,
    async close() {
      const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
      for (const socket of authenticating) socket.destroy();
      await backend.stop();
      await closed;
      if (directory) await rm(directory, { recursive: true, force: true });
    },
  };
}
