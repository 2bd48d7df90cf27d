import { loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { rawRequest, type RawRequestOptions } from './http.ts';
import { expectMatchesSpec, type CapturedResponse } from './openapi.ts';

export interface TestApi {
  server: RunningServer;
  url: string;
  /** Sends a request and checks the response against the OpenAPI document. */
  call(path: string, options?: RawRequestOptions & { key?: string }): Promise<CapturedResponse & { text: string }>;
  close(): Promise<void>;
}

export async function startTestApi(db: Database, env: Record<string, string> = {}): Promise<TestApi> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', KEY_CACHE_TTL_MS: '0', ...env });
  const server = await startServer({ config, logger: createLogger('silent'), db });
  return {
    server,
    url: server.publicUrl,
    async call(path, options = {}) {
      const headers: Array<[string, string]> = [...(options.headers ?? [])];
      if (options.key) headers.push(['Authorization', `Bearer ${options.key}`]);
      const response = await rawRequest(server.publicUrl, path, { ...options, headers });
      await expectMatchesSpec(options.method ?? 'GET', path, response);
      return response;
    },
    close: () => server.close(),
  };
}
