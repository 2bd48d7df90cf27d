import { loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server.ts';
import { rawRequest, type RawRequestOptions } from './http.ts';
import { expectMatchesSpec, type CapturedResponse } from './openapi.ts';

export interface TestApi {
  server: RunningServer;
  /** Every log line the server wrote. */
  logs: string[];
  url: string;
  /** Sends a request and checks the response against the OpenAPI document. */
  call(path: string, options?: RawRequestOptions & { key?: string }): Promise<CapturedResponse & { text: string }>;
  /**
   * A query to the internal GraphQL endpoint. The budget's `extensions.cost`, whose numbers change
   * with every request, comes apart from the body, as `cost`.
   */
  graphql(query: string, variables?: Record<string, unknown>, token?: string): Promise<{ status: number; body: GraphQLResponse; cost: CostExtension | undefined }>;
  close(): Promise<void>;
}

export interface GraphQLResponse {
  data?: Record<string, unknown> | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
  extensions?: Record<string, unknown>;
}

/** `extensions.cost` of an internal answer (docs/internal-graphql.md, Cost budgets). */
export interface CostExtension {
  estimate: number;
  actual: number;
  budget: number;
  remaining: number;
  resetSeconds: number;
}

/** An internal answer's body with `extensions.cost` taken out (and `extensions` with it when nothing else is in it). */
export function withoutCost(body: GraphQLResponse): { body: GraphQLResponse; cost: CostExtension | undefined } {
  const { cost, ...extensions } = (body.extensions ?? {}) as { cost?: CostExtension };
  const { extensions: _extensions, ...rest } = body;
  return { body: Object.keys(extensions).length > 0 ? { ...rest, extensions } : rest, cost };
}

export const INTERNAL_TOKEN = 'internal-test-token-0123456789';

/** Every log line of every server this test file started (checked for secrets after the file). */
export const capturedLogs: string[] = [];

export async function startTestApi(
  db: Database,
  env: Record<string, string> = {},
  extra: Pick<ServerOptions, 'model' | 'trustedCertificates'> = {},
): Promise<TestApi> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    INTERNAL_PORT: '0',
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    LOG_LEVEL: 'silent',
    KEY_CACHE_TTL_MS: '0',
    // Internal tokens' budgets bound database time: tests of other things run where none meets its
    // budget; those of the budgets set it (internal-cost-budgets.test.ts).
    INTERNAL_COST_PER_MINUTE: '1000000000',
    // Keys' activity is written when a test asks (server.keyActivity.flush()) and at close, so that
    // no periodic write falls into a test's count of statements.
    KEY_REQUEST_LOG_FLUSH_MS: '0',
    ...env,
  });
  const logs: string[] = [];
  // One write may carry several lines (the request lines of one turn of the event loop).
  const logger = createLogger('info', {
    write: (chunk: string) => {
      for (const line of chunk.split('\n')) {
        if (line === '') continue;
        logs.push(line);
        capturedLogs.push(line);
      }
    },
  });
  const server = await startServer({ config, logger, db, ...extra });
  return {
    server,
    logs,
    url: server.publicUrl,
    async call(path, options = {}) {
      const headers: Array<[string, string]> = [...(options.headers ?? [])];
      if (options.key) headers.push(['Authorization', `Bearer ${options.key}`]);
      const response = await rawRequest(server.publicUrl, path, { ...options, headers });
      await expectMatchesSpec(options.method ?? 'GET', path, response);
      return response;
    },
    async graphql(query, variables = {}, token = INTERNAL_TOKEN) {
      const response = await fetch(`${server.internalUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, ...withoutCost((await response.json()) as GraphQLResponse) };
    },
    close: () => server.close(),
  };
}
