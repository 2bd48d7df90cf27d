import { request as httpRequest } from 'node:http';
import type { CapturedResponse } from './openapi.ts';

export interface RawRequestOptions {
  method?: string;
  /** Header pairs as sent, in order; a name may repeat. */
  headers?: Array<[string, string]>;
  body?: string | Buffer;
}

/** An HTTP request with full control over method, path and repeated headers (fetch normalises them). */
export function rawRequest(baseUrl: string, path: string, options: RawRequestOptions = {}): Promise<CapturedResponse & { text: string }> {
  const url = new URL(baseUrl);
  const pairs = [...(options.headers ?? [])];
  // Node frames no body on GET by itself: without a length the bytes would read as a new request.
  if (options.body !== undefined && !pairs.some(([name]) => name.toLowerCase() === 'content-length')) {
    pairs.push(['Content-Length', String(Buffer.byteLength(options.body))]);
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method: options.method ?? 'GET', path, headers: toHeaderObject(pairs), insecureHTTPParser: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          let body: unknown = text;
          if ((headers['content-type'] ?? '').startsWith('application/json') && text !== '') body = JSON.parse(text);
          resolve({ status: res.statusCode ?? 0, headers, body, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

function toHeaderObject(pairs: Array<[string, string]>): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of pairs) {
    const existing = headers[name];
    if (existing === undefined) headers[name] = value;
    else headers[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return headers;
}
