import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  /** When the request arrived (ms since epoch). */
  at: number;
  /** Attempts of the same webhook-id in flight when this one arrived (0 unless two overlap). */
  overlapping: number;
}

/** What the receiver answers to a delivery: a status, optionally after a pause, with extra headers. */
export interface Answer {
  status: number;
  delayMs?: number;
  headers?: Record<string, string>;
}

export interface WebhookReceiver {
  url: string;
  /** The receiver's self-signed certificate (PEM). */
  certificate: string;
  /** A file holding the certificate, for NODE_EXTRA_CA_CERTS of child processes. */
  certificateFile: string;
  received: ReceivedDelivery[];
  answer: (delivery: ReceivedDelivery) => Answer;
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

/** A local HTTPS receiver with a self-signed certificate that records every delivery. */
export async function startReceiver(answer: WebhookReceiver['answer'] = () => ({ status: 204 })): Promise<WebhookReceiver> {
  const { cert, key, file } = await selfSignedCertificate();
  const inFlight = new Map<string, number>();
  const receiver: WebhookReceiver = {
    url: '',
    certificate: cert,
    certificateFile: file,
    received: [],
    answer,
    async waitFor(predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(receiver.received)) {
        if (Date.now() > deadline) throw new Error(`the receiver did not see what was expected in ${timeoutMs} ms (${receiver.received.length} received)`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: async () => {},
  };
  const server: Server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const overlapping = inFlight.get(id) ?? 0;
      inFlight.set(id, overlapping + 1);
      const delivery: ReceivedDelivery = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), overlapping };
      receiver.received.push(delivery);
      const reply = receiver.answer(delivery);
      const finish = () => {
        inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
        if (res.destroyed) return;
        res.writeHead(reply.status, reply.headers ?? {});
        res.end();
      };
      if (reply.delayMs) setTimeout(finish, reply.delayMs);
      else finish();
    });
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
