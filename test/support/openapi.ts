import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { parse } from 'yaml';
import { expect } from 'vitest';

export const spec = parse(readFileSync(new URL('../../openapi/public-v1.yaml', import.meta.url), 'utf8')) as Document;

let backend: OpenAPIBackend | null = null;

async function api(): Promise<OpenAPIBackend> {
  if (!backend) {
    backend = new OpenAPIBackend({ definition: structuredClone(spec), quick: false, validate: true, strict: true });
    await backend.init();
  }
  return backend;
}

export interface CapturedResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Fails unless the response is one the OpenAPI document describes for this method and path:
 * status, body schema and documented headers. Paths the document lacks must answer with the
 * error schema (404 not_found).
 */
export async function expectMatchesSpec(method: string, path: string, response: CapturedResponse): Promise<void> {
  const openapi = await api();
  const operation = openapi.router.matchOperation({ method: method.toLowerCase(), path: path.split('?')[0]!, headers: {} });
  if (!operation) {
    expect(response.status, `${method} ${path} is not in the spec, so it must be 404`).toBe(404);
    const errorSchemaResult = openapi.validator.validateResponse(response.body, 'listCourses', 404);
    expect(errorSchemaResult.errors ?? [], JSON.stringify(response.body)).toEqual([]);
    return;
  }
  const documented = Object.keys(operation.responses ?? {});
  expect(documented, `${method} ${path} does not document status ${response.status}`).toContain(String(response.status));
  if (method.toUpperCase() !== 'HEAD' && response.status !== 304) {
    const result = openapi.validator.validateResponse(response.body, operation, response.status);
    expect(result.errors ?? [], `${method} ${path} ${response.status}: ${JSON.stringify(response.body).slice(0, 500)}`).toEqual([]);
  }
  const headerResult = openapi.validator.validateResponseHeaders(response.headers, operation, {
    statusCode: response.status,
    setMatchType: 'superset' as never,
  });
  expect(headerResult.errors ?? [], `${method} ${path} ${response.status} headers`).toEqual([]);
}
