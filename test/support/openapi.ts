import { readFileSync } from 'node:fs';
import ajvFormats from 'ajv-formats';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { parse } from 'yaml';
import { expect } from 'vitest';

export const spec = parse(readFileSync(new URL('../../openapi/public-v1.yaml', import.meta.url), 'utf8')) as Document;

// ajv-formats is CommonJS: its function is the module itself or its `default`, by loader.
const addFormats = ((ajvFormats as unknown as { default?: unknown }).default ?? ajvFormats) as (ajv: unknown) => void;

let backend: Promise<OpenAPIBackend> | null = null;

/** The document's validator, made once per process; callers at the same moment share its making. */
function api(): Promise<OpenAPIBackend> {
  backend ??= (async () => {
    const made = new OpenAPIBackend({
      definition: withWebhookPath(structuredClone(spec)),
      quick: true,
      strict: true,
      ajvOpts: { allErrors: true },
      customizeAjv: (ajv) => {
        addFormats(ajv);
        return ajv;
      },
    });
    await made.init();
    return made;
  })();
  return backend;
}

const webhookPath = (type: string) => `/__webhooks/${type}`;

/**
 * openapi-backend validates paths, not `webhooks`: each webhook (booking.created, booking.updated)
 * is mirrored as a request to a path of its own, so a delivery is validated with its documented
 * headers and body.
 */
function withWebhookPath(definition: Document): Document {
  const webhooks = (definition as unknown as { webhooks: Record<string, { post: Record<string, unknown> }> }).webhooks;
  definition.paths = definition.paths ?? {};
  for (const [type, webhook] of Object.entries(webhooks)) {
    definition.paths[webhookPath(type)] = { post: { ...webhook.post, operationId: `webhook.${type}` } } as never;
  }
  return definition;
}

/**
 * Fails unless a received webhook delivery (headers and raw body) is what the OpenAPI document
 * describes for the webhook its `type` names (a type the document lacks fails too).
 */
export async function expectWebhookMatchesSpec(headers: Record<string, string | string[] | undefined>, rawBody: string): Promise<void> {
  const openapi = await api();
  const plain = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  const body = JSON.parse(rawBody) as { type?: unknown };
  const documented = Object.keys((spec as unknown as { webhooks: Record<string, unknown> }).webhooks);
  expect(documented, `webhook delivery of an undocumented type: ${rawBody.slice(0, 200)}`).toContain(body.type);
  const result = openapi.validator.validateRequest({ method: 'post', path: webhookPath(String(body.type)), headers: plain, body });
  expect(result.errors ?? [], `webhook delivery: ${rawBody.slice(0, 500)}`).toEqual([]);
}

export interface CapturedResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

interface HeaderObject {
  required?: boolean;
}

/**
 * Fails unless the response is one the OpenAPI document describes for this method and path:
 * a documented status, a body matching its schema, every documented header value matching its
 * schema and every required header present. Paths the document lacks must be 404 errors.
 */
export async function expectMatchesSpec(method: string, path: string, response: CapturedResponse): Promise<void> {
  const openapi = await api();
  const pathname = path.split('?')[0]!;
  // Only canonical paths name a documented resource; `//x` or `/a/../b` are other paths to the server.
  const canonical = !/\/\/|\/\.\.?(\/|$)/.test(pathname);
  const operation = canonical ? openapi.router.matchOperation({ method: method.toLowerCase(), path: pathname, headers: {} }) : undefined;
  if (!operation) {
    expect(response.status, `${method} ${path} is not in the spec, so it must be 404 or 405`).toBeOneOf([404, 405]);
    const result = openapi.validator.validateResponse(response.body, 'listCourses', response.status === 405 ? 404 : 404);
    expect(result.errors ?? [], JSON.stringify(response.body)).toEqual([]);
    return;
  }
  const described = operation.responses?.[String(response.status)] as { headers?: Record<string, HeaderObject> } | undefined;
  expect(described, `${method} ${path} does not document status ${response.status}`).toBeDefined();
  if (method.toUpperCase() !== 'HEAD' && response.status !== 304) {
    const result = openapi.validator.validateResponse(response.body, operation, response.status);
    expect(result.errors ?? [], `${method} ${path} ${response.status}: ${JSON.stringify(response.body).slice(0, 500)}`).toEqual([]);
  }
  const headerResult = openapi.validator.validateResponseHeaders(response.headers, operation, {
    statusCode: response.status,
    setMatchType: 'any' as never,
  });
  expect(headerResult.errors ?? [], `${method} ${path} ${response.status} headers`).toEqual([]);
  for (const [name, header] of Object.entries(described?.headers ?? {})) {
    if (header.required) expect(response.headers, `${method} ${path} ${response.status} must send ${name}`).toHaveProperty(name.toLowerCase());
  }
}
