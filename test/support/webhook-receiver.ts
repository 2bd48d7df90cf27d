import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { expectWebhookMatchesSpec } from './openapi.ts';
import { deliveryChecks, deliveryProblems } from './webhook-problems.ts';
import { verifyDelivery } from './webhooks.ts';

export interface ReceivedDelivery {
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When the request arrived (ms since epoch). */
  at: number;
  /** Attempts of the same webhook-id in flight when this one arrived (0 unless two overlap). */
  overlapping: number;
  /** The TLS connection it came on (numbered from 1 in the order they were accepted). */
  connection: number;
  /** Whether an earlier request came on the same connection. */
  reused: boolean;
  /** When the answer was written (ms since epoch); null until then, or when none was. */
  answeredAt: number | null;
}

/** What the receiver answers to a delivery: a status, optionally after a pause, with extra headers. */
export interface Answer {
  status: number;
  delayMs?: number;
  headers?: Record<string, string>;
  /** Close the connection instead of answering: at once, or after the first bytes of the status line. */
  drop?: 'before-answer' | 'mid-answer';
  /** The answer's body (none unless given). */
  body?: string;
}

export interface WebhookReceiver {
  url: string;
  /** The receiver's self-signed certificate (PEM). */
  certificate: string;
  /** A file holding the certificate, for NODE_EXTRA_CA_CERTS of child processes. */
  certificateFile: string;
  received: ReceivedDelivery[];
  /** TLS connections accepted so far. */
  connections: number;
  answer: (delivery: ReceivedDelivery) => Answer;
  /**
   * Every delivery's body and headers are validated against the OpenAPI document's webhook of its
   * type. Once given (`checkWith`), the receiver also verifies the signature with the
   * `standardwebhooks` library against these secrets, as a careful receiver does, and answers 400
   * when none verifies. What fails is listed in `problems` (and checked after every test file).
   */
  checkWith(secrets: string[]): void;
  problems: string[];
  /** Waits until `predicate` holds for the received deliveries. */
  waitFor(predicate: (received: ReceivedDelivery[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

let certificate: Promise<{ cert: string; key: string; file: string }> | null = null;

/** One self-signed certificate (and key) for localhost and 127.0.0.1 per test process. */
export function selfSignedCertificate() {
  certificate ??= (async () => {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notAfterDate: new Date(Date.now() + 24 * 3600_000),
      extensions: [
        { name: 'basicConstraints', cA: true },
        { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
      ],
    });
    const file = join(tmpdir(), `webhook-receiver-${process.pid}-${Date.now()}.pem`);
    await writeFile(file, pems.cert);
    return { cert: pems.cert, key: pems.private, file };
  })();
  return certificate;
}

function verifies(secrets: string[], delivery: ReceivedDelivery): boolean {
  return secrets.some((secret) => {
    try {
      verifyDelivery(secret, delivery);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * A local HTTPS receiver with a self-signed certificate that records every delivery. It is Node's
 * own `https.createServer` with its default settings (keep-alive timeout included) unless
 * `serverOptions` says otherwise.
 */
export async function startReceiver(
  answer: WebhookReceiver['answer'] = () => ({ status: 204 }),
  serverOptions: { keepAliveTimeout?: number } = {},
): Promise<WebhookReceiver> {
  const { cert, key, file } = await selfSignedCertificate();
  const inFlight = new Map<string, number>();
  let secrets: string[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    certificate: cert,
    certificateFile: file,
    received: [],
    connections: 0,
    answer,
    checkWith(given) {
      secrets = given;
    },
    problems: [],
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > deadline) throw new Error(`the receiver did not see what was expected in ${timeoutMs} ms (${receiver.received.length} received)`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: async () => {},
  };
  const connectionOf = new WeakMap<object, { number: number; requests: number }>();
  const server: Server = createServer({ cert, key }, (req, res) => {
    const connection = connectionOf.get(req.socket) ?? { number: 0, requests: 0 };
    connection.requests += 1;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const overlapping = inFlight.get(id) ?? 0;
      inFlight.set(id, overlapping + 1);
      const delivery: ReceivedDelivery = {
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
        overlapping,
        connection: connection.number,
        reused: connection.requests > 1,
        answeredAt: null,
      };
      receiver.received.push(delivery);
      const problem = (text: string) => {
        receiver.problems.push(`${id}: ${text}`);
        deliveryProblems.push(`${receiver.url} ${id}: ${text}`);
      };
      const forged = secrets.length > 0 && !verifies(secrets, delivery);
      if (forged) problem('no signature verifies with the standardwebhooks library');
      deliveryChecks.push(expectWebhookMatchesSpec(delivery.headers, delivery.body).catch((error: unknown) => problem((error as Error).message)));
      const reply = forged ? { status: 400 } : receiver.answer(delivery);
      const finish = () => {
        inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
        if (res.destroyed) return;
        if (reply.drop === 'mid-answer') req.socket.write('HTTP/1.1 20');
        if (reply.drop) return void req.socket.destroy();
        res.writeHead(reply.status, reply.headers ?? {});
        res.end(reply.body);
        delivery.answeredAt = Date.now();
      };
      if (reply.delayMs) setTimeout(finish, reply.delayMs);
      else finish();
    });
  });
  if (serverOptions.keepAliveTimeout !== undefined) server.keepAliveTimeout = serverOptions.keepAliveTimeout;
  server.on('secureConnection', (socket) => {
    receiver.connections += 1;
    connectionOf.set(socket, { number: receiver.connections, requests: 0 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
