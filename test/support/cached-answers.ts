import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApi } from './public-api.ts';

/** An answer of the test server, with how its response cache answered. */
export interface Served {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The request log's `cache` field. */
  cache: string | null;
}

export interface ServedOptions {
  key?: string | undefined;
  method?: string;
  headers?: Array<[string, string]>;
}

/** One request, validated against the OpenAPI document, with the request log's `cache` field. */
export async function served(server: TestApi, path: string, options: ServedOptions = {}): Promise<Served> {
  const requestId = randomUUID();
  const { key, ...rest } = options;
  const response = await server.call(path, { ...rest, ...(key ? { key } : {}), headers: [...(options.headers ?? []), ['X-Request-Id', requestId]] });
  // The log line is written when the answer has been handed to the socket: wait for it.
  let line: string | undefined;
  for (let tries = 0; !line && tries < 100; tries += 1) {
    line = server.logs.find((entry) => entry.includes(requestId));
    if (!line) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(line, `the request log line of ${path}`).toBeDefined();
  return { status: response.status, headers: response.headers, text: response.text, cache: (JSON.parse(line!) as { cache: string | null }).cache };
}
