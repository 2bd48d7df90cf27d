import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { errorCatalogue, errorCodes } from '../../src/errors.ts';

const spec = parse(readFileSync(new URL('../../openapi/public-v1.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;

/** Every `code` enum and example in the document, wherever an error schema or example lists them. */
function documentedCodes(): { enumCodes: Set<string>; exampleStatus: Map<string, Set<number>> } {
  const enumCodes = new Set<string>();
  const exampleStatus = new Map<string, Set<number>>();
  const visit = (node: unknown, status: number | null): void => {
    if (Array.isArray(node)) return node.forEach((item) => visit(item, status));
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    const errorProperty = (record.properties as Record<string, { properties?: { code?: { enum?: string[] } } }> | undefined)?.error;
    for (const code of errorProperty?.properties?.code?.enum ?? []) enumCodes.add(code);
    const example = (record.error as { code?: unknown } | undefined)?.code;
    if (typeof example === 'string' && status !== null) {
      if (!exampleStatus.has(example)) exampleStatus.set(example, new Set());
      exampleStatus.get(example)!.add(status);
    }
    for (const [key, value] of Object.entries(record)) visit(value, /^[1-5]\d\d$/.test(key) ? Number(key) : status);
  };
  visit(spec, null);
  return { enumCodes, exampleStatus };
}

describe('error catalogue', () => {
  const { enumCodes } = documentedCodes();

  it('errors.catalogue: every code in the catalogue is documented in openapi/public-v1.yaml, and every documented code is in the catalogue', () => {
    expect([...enumCodes].sort()).toEqual([...errorCodes].sort());
  });

  it('errors.catalogue: every documented response with an example error code uses the status the catalogue gives that code', () => {
    const responses = (spec.components as { responses?: Record<string, unknown> }).responses ?? {};
    const paths = spec.paths as Record<string, Record<string, { responses?: Record<string, unknown> }>>;
    const pairs: Array<[string, unknown]> = [];
    for (const item of Object.values(paths)) {
      for (const operation of Object.values(item)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) pairs.push([status, response]);
      }
    }
    let checked = 0;
    for (const [status, response] of pairs) {
      const ref = (response as { $ref?: string }).$ref;
      const resolved = ref ? responses[ref.split('/').pop()!] : response;
      const text = JSON.stringify(resolved);
      for (const match of text.matchAll(/"code":"([a-z_]+)"/g)) {
        const code = match[1] as keyof typeof errorCatalogue;
        expect(errorCatalogue[code], `${code} documented under ${status}`).toBeDefined();
        expect(String(errorCatalogue[code].status), `${code} documented under ${status}`).toBe(status);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(errorCodes.length);
  });

  it('errors.catalogue: messages are safe: no hashes, key material, SQL or internal ids', () => {
    for (const { message } of Object.values(errorCatalogue)) {
      expect(message).not.toMatch(/svc_|[0-9a-f]{16,}|SELECT|_id|ws_|key_/i);
    }
  });
});
