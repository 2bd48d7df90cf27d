/**
 * A minimal booking webhook receiver: verifies every delivery with the `standardwebhooks` library,
 * handles each event once, however often it is delivered, and keeps a copy of the workspace's
 * bookings true from `booking.created` and `booking.updated`.
 *
 *   WEBHOOK_SECRET=whsec_… RECEIVER_PORT=8443 TLS_CERT=cert.pem TLS_KEY=key.pem npx tsx examples/webhook-receiver/receiver.ts
 *
 * Without TLS_CERT and TLS_KEY it serves plain HTTP, for use behind a proxy that terminates TLS
 * (the service delivers only to https:// addresses). It listens on 127.0.0.1 unless RECEIVER_HOST
 * names another address (0.0.0.0 for every interface).
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { pathToFileURL } from 'node:url';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { components } from '../../src/contract/public-v1-types.ts';

/** The delivered events, typed from openapi/public-v1.yaml (its `webhooks` section). */
export type BookingCreatedEvent = components['schemas']['BookingCreatedEvent'];
export type BookingUpdatedEvent = components['schemas']['BookingUpdatedEvent'];
export type BookingEvent = BookingCreatedEvent | BookingUpdatedEvent;
export type Booking = components['schemas']['Booking'];

export interface ReceiverOptions {
  /** The endpoint's signing secret, `whsec_…`, as `webhook add` printed it. */
  secret: string;
  /** Called once per event id; a redelivered event is acknowledged but not handled again. */
  onEvent(event: BookingEvent): void | Promise<void>;
  tls?: { cert: string; key: string };
  /** Body size limit; booking payloads are well below it. */
  maxBodyBytes?: number;
}

/**
 * A copy of the bookings kept from events. Events arrive in no particular order, and a retried
 * one after later ones: a booking's state is replaced only by a newer one (a later `updatedAt`,
 * or at the same `updatedAt` an event recorded later). Test events (`"test": true`) describe no
 * real booking and are left out.
 */
export class BookingCopy {
  readonly bookings = new Map<string, Booking>();
  readonly #recordedAt = new Map<string, string>();

  apply(event: BookingEvent): 'kept' | 'older' | 'test' {
    if (event.test) return 'test';
    const booking = event.data.booking;
    const held = this.bookings.get(booking.id);
    const newer = !held || booking.updatedAt > held.updatedAt || (booking.updatedAt === held.updatedAt && event.createdAt >= this.#recordedAt.get(booking.id)!);
    if (!newer) return 'older';
    this.bookings.set(booking.id, booking);
    this.#recordedAt.set(booking.id, event.createdAt);
    return 'kept';
  }
}

function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function createReceiver(options: ReceiverOptions): Server {
  const webhook = new Webhook(options.secret);
  // Event ids already handled. A real receiver keeps them in its database (with a unique
  // constraint) for longer than the retry schedule lasts: about 28 hours.
  const handled = new Set<string>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const body = await readBody(req, options.maxBodyBytes ?? 256 * 1024);
    if (body === null) return void res.writeHead(413).end();
    const header = (name: string) => String(req.headers[name] ?? '');
    let event: BookingEvent;
    try {
      // The service signs in `x-svc-signature` (and sends the same value as `webhook-signature`);
      // the library reads the standard header names, so the contract header is passed under its name.
      event = webhook.verify(body, {
        'webhook-id': header('webhook-id'),
        'webhook-timestamp': header('webhook-timestamp'),
        'webhook-signature': header('x-svc-signature'),
      }) as BookingEvent;
    } catch (error) {
      if (error instanceof WebhookVerificationError) return void res.writeHead(400).end();
      throw error;
    }
    if (handled.has(event.id)) return void res.writeHead(204).end();
    // Handle first, then remember: a crash in between means one more delivery, never a lost event.
    await options.onEvent(event);
    handled.add(event.id);
    res.writeHead(204).end();
  };

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      console.error('webhook handling failed:', error);
      // Any status outside 2xx makes the service try again later (410 would disable the endpoint).
      if (!res.headersSent) res.writeHead(500).end();
    });
  };
  return options.tls ? createHttpsServer(options.tls, listener) : createHttpServer(listener);
}

/** One line per event: what happened to which booking, and what it changed. */
function describe(event: BookingEvent, outcome: ReturnType<BookingCopy['apply']>): string {
  const booking = event.data.booking;
  const changed = event.type === 'booking.updated' ? Object.keys(event.data.previous) : [];
  return JSON.stringify({ received: event.type, id: event.id, booking: booking.id, status: booking.status, changed, copy: outcome });
}

export interface ReceiverSettings {
  secret: string;
  host: string;
  port: number;
  tls?: { cert: string; key: string };
}

/**
 * The receiver's settings from its environment, or what is wrong with them in one sentence: a
 * person starting it by hand should read what to change, not a stack trace.
 */
export function settingsFrom(env: Record<string, string | undefined>): ReceiverSettings | { problem: string } {
  const secret = env.WEBHOOK_SECRET ?? '';
  if (!secret.startsWith('whsec_')) return { problem: 'Set WEBHOOK_SECRET to the whsec_… secret that `webhook add` printed.' };
  try {
    new Webhook(secret);
  } catch {
    // The library's own message ("incorrect padding") would not say which value is wrong.
    return { problem: 'WEBHOOK_SECRET is not a whole whsec_… secret (whsec_ and base64): copy it again from what `webhook add` printed.' };
  }
  // RECEIVER_PORT, not PORT: a shell that runs the service beside it may have PORT set for the service.
  const portText = env.RECEIVER_PORT ?? '8443';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65_535) return { problem: `RECEIVER_PORT must be a port number from 1 to 65535, not ${JSON.stringify(portText)}.` };
  const { TLS_CERT, TLS_KEY } = env;
  if (Boolean(TLS_CERT) !== Boolean(TLS_KEY)) return { problem: 'Set both TLS_CERT and TLS_KEY (PEM files) to serve HTTPS, or neither to serve plain HTTP behind a proxy.' };
  let tls: ReceiverSettings['tls'];
  if (TLS_CERT && TLS_KEY) {
    try {
      tls = { cert: readFileSync(TLS_CERT, 'utf8'), key: readFileSync(TLS_KEY, 'utf8') };
    } catch (error) {
      return { problem: `TLS_CERT or TLS_KEY cannot be read: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}.` };
    }
  }
  return { secret, host: env.RECEIVER_HOST ?? '127.0.0.1', port, ...(tls ? { tls } : {}) };
}

/** Starts listening; a port in use or not allowed, or TLS files that do not fit, is said in one sentence. */
export async function listen(settings: ReceiverSettings, onEvent: ReceiverOptions['onEvent']): Promise<Server> {
  let server: Server;
  try {
    server = createReceiver({ secret: settings.secret, onEvent, ...(settings.tls ? { tls: settings.tls } : {}) });
  } catch {
    throw new Error('TLS_CERT and TLS_KEY are not a PEM certificate and its private key.');
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const where = `${settings.host}:${settings.port}`;
      if (error.code === 'EADDRINUSE') reject(new Error(`${where} is in use by another program: set RECEIVER_PORT to a free port.`));
      else if (error.code === 'EACCES') reject(new Error(`${where} may not be used by this user: set RECEIVER_PORT to a port above 1023.`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') reject(new Error(`RECEIVER_HOST ${settings.host} is not an address of this machine.`));
      else reject(new Error(`cannot listen on ${where}: ${error.message}`));
    });
    server.listen(settings.port, settings.host, resolve);
  });
  return server;
}

async function main(): Promise<void> {
  const settings = settingsFrom(process.env);
  if ('problem' in settings) {
    console.error(settings.problem);
    process.exit(2);
  }
  const copy = new BookingCopy();
  let server: Server;
  try {
    server = await listen(settings, (event) => console.log(describe(event, copy.apply(event))));
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  // The loopback address is named as localhost, the name the README's certificate is made for.
  const host = settings.host === '127.0.0.1' ? 'localhost' : settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  console.log(`Receiving booking.created and booking.updated on ${settings.tls ? 'https' : 'http'}://${host}:${settings.port}/`);
  process.on('SIGTERM', () => server.close());
  process.on('SIGINT', () => server.close());
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
