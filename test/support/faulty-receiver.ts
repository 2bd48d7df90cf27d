import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { selfSignedCertificate } from './webhook-receiver.ts';

/**
 * How a receiver misbehaves: it accepts and never answers, answers 200 and then sends its body a
 * byte at a time, answers a redirect, closes the connection in the middle of its status line,
 * answers 200 with a 50 MB body, or (not a fault: to count requests in flight) answers 204 after
 * 100 ms.
 */
export type Fault = 'hang' | 'drip' | 'redirect' | 'close-mid-answer' | 'huge-body' | 'slow';

/** Requests in flight (arrived, not yet answered or closed), now and at most, over one or more receivers. */
export interface InFlight {
  now: number;
  max: number;
}

export interface FaultyReceiver {
  url: string;
  certificate: string;
  certificateFile: string;
  /** Requests that arrived. */
  requests: number;
  /** Requests in flight at this receiver. */
  inFlight: InFlight;
  /** Bytes of the huge body the receiver managed to write before the sender let go. */
  bytesWritten: number;
  close(): Promise<void>;
}

export const HUGE_BODY_BYTES = 50 * 1024 * 1024;

const counter = (): InFlight => ({ now: 0, max: 0 });

/** An HTTPS receiver that misbehaves as `fault` says; `shared` also counts its requests in flight. */
export async function startFaultyReceiver(fault: Fault, shared: InFlight = counter()): Promise<FaultyReceiver> {
  const { cert, key, file } = await selfSignedCertificate();
  const receiver: FaultyReceiver = { url: '', certificate: cert, certificateFile: file, requests: 0, inFlight: counter(), bytesWritten: 0, close: async () => {} };
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer({ cert, key }, (req, res) => {
    receiver.requests += 1;
    for (const count of [receiver.inFlight, shared]) {
      count.now += 1;
      count.max = Math.max(count.max, count.now);
    }
    res.once('close', () => {
      for (const count of [receiver.inFlight, shared]) count.now -= 1;
    });
    req.resume();
    req.once('end', () => {
      if (fault === 'redirect') return void res.writeHead(302, { location: 'https://example.com/elsewhere' }).end();
      if (fault === 'slow') {
        const timer = setTimeout(() => res.writeHead(204).end(), 100);
        timers.add(timer);
        return;
      }
      if (fault === 'close-mid-answer') {
        req.socket.write('HTTP/1.1 20');
        return void req.socket.destroy();
      }
      if (fault === 'drip') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write('.'), 100);
        timers.add(timer);
        return void res.once('close', () => clearInterval(timer));
      }
      if (fault === 'huge-body') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(HUGE_BODY_BYTES) });
        const chunk = Buffer.alloc(64 * 1024, 120);
        const write = () => {
          while (receiver.bytesWritten < HUGE_BODY_BYTES) {
            receiver.bytesWritten += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', write);
          }
          res.end();
        };
        return write();
      }
      // 'hang': the request is read and never answered.
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = () =>
    new Promise((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}
