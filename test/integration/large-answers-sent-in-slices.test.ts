import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sendBytes } from '../../rest/pipeline/answers.ts';
import { RequestState } from '../../rest/pipeline/request-state.ts';

/** A body of `length` bytes, each its offset's low byte, split into pieces of the sizes given, cycled. */
function pieces(length: number, sizes: readonly number[]): Buffer[] {
  const whole = Buffer.alloc(length, 0);
  for (let i = 0; i < length; i += 1) whole[i] = i % 251;
  const out: Buffer[] = [];
  for (let at = 0, i = 0; at < length; i += 1) {
    const size = Math.min(sizes[i % sizes.length]!, length - at);
    out.push(whole.subarray(at, at + size));
    at += size;
  }
  return out;
}

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Serves `body` through `sendBytes` and reads it back; with `readEveryMs`, the client reads slowly (the socket fills). */
async function roundTrip(body: Buffer[], method = 'GET', readEveryMs = 0): Promise<{ status: number; length: string | undefined; bytes: Buffer }> {
  server = createServer((req, res) => {
    const state = new RequestState(req as never, res as never, 'test' as never, '', false, 'req', []);
    sendBytes(state, 200, 'application/json', body, body.reduce((sum, piece) => sum + piece.length, 0));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const asked = request({ host: '127.0.0.1', port, method, path: '/' }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (readEveryMs > 0) {
          response.pause();
          setTimeout(() => response.resume(), readEveryMs);
        }
      });
      response.on('end', () => resolve({ status: response.statusCode!, length: response.headers['content-length'], bytes: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    asked.on('error', reject);
    asked.end();
  });
}

describe('sendBytes', () => {
  it.each([
    ['one small piece', 1000, [1000]],
    ['small pieces under a slice', 200_000, [70_000]],
    ['a large body in 64 KB pieces', 3_000_000, [65_536]],
    ['a large body in one piece', 2_000_000, [2_000_000]],
    ['pieces of odd sizes, empty ones among them, across slice ends', 1_500_000, [0, 300_000, 1, 262_143, 0, 5]],
  ])('sends %s byte for byte, with its length', async (_name, length, sizes) => {
    const body = pieces(length, sizes);
    const answer = await roundTrip(body);
    expect(answer.status).toBe(200);
    expect(answer.length).toBe(String(length));
    expect(answer.bytes.equals(Buffer.concat(body))).toBe(true);
  });

  it('sends a large body whole to a client that reads slowly', async () => {
    const body = pieces(4_000_000, [65_536]);
    const answer = await roundTrip(body, 'GET', 1);
    expect(answer.bytes.equals(Buffer.concat(body))).toBe(true);
  });

  it('answers HEAD with the length alone', async () => {
    const answer = await roundTrip(pieces(1_000_000, [65_536]), 'HEAD');
    expect(answer.length).toBe('1000000');
    expect(answer.bytes.length).toBe(0);
  });
});
