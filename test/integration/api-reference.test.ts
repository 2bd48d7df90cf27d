import { beforeAll, describe, expect, it } from 'vitest';
import { errorCodes } from '../../src/errors.ts';
import { rawRequest } from '../support/http.ts';
import { type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';

/** The `src`/`href`/`spec-url` values of an HTML page and the `url(…)` values of its inline CSS. */
function referencedUrls(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href|spec-url)\s*=\s*["']?([^"'\s>]+)/gi), ...html.matchAll(/url\(\s*["']?([^"')]+)/gi)].map((match) => match[1]!);
}

describe('the API reference page at /docs', () => {
  let api: TestApi;

  beforeAll(async () => {
    ({ api } = await sharedTestApi('embedded'));
  });

  it('is served as HTML without authentication', async () => {
    const response = await api.call('/docs');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.text).toContain('<redoc spec-url="/openapi/public-v1.yaml"');
  });

  it('references only assets of the service itself, and each is served with its type', async () => {
    const { text } = await api.call('/docs');
    const urls = referencedUrls(text);
    expect(urls.length).toBeGreaterThan(0);
    expect(text).not.toMatch(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    for (const url of urls) expect(url, url).toMatch(/^\/(?!\/)/);
    const expectedTypes: Record<string, RegExp> = {
      '/docs/assets/redoc.standalone.js': /^text\/javascript; charset=utf-8$/,
      '/openapi/public-v1.yaml': /^application\/yaml; charset=utf-8$/,
    };
    expect(urls.sort()).toEqual(Object.keys(expectedTypes).sort());
    for (const url of urls) {
      const response = await api.call(url);
      expect(response.status, url).toBe(200);
      expect(response.headers['content-type'], url).toMatch(expectedTypes[url]!);
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('carries a Content-Security-Policy that allows nothing from another origin', async () => {
    const csp = (await api.call('/docs')).headers['content-security-policy'] ?? '';
    const directives = new Map(csp.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    for (const [name, sources] of directives) {
      for (const source of sources) expect(`${name} ${source}`).toMatch(/ ('self'|'none'|'unsafe-inline'|data:|blob:)$/);
    }
    expect(directives.get('script-src')).not.toContain("'unsafe-inline'");
  });

  it('is rendered from the served OpenAPI document, which documents every error code and the three scopes', async () => {
    const { text } = await api.call('/openapi/public-v1.yaml');
    for (const code of errorCodes) expect(text).toContain(`\`${code}\``);
    for (const scope of ['courses:read', 'bookings:read', 'participants:read']) expect(text).toContain(`\`${scope}\``);
    expect(text).toContain('  /docs:');
  });

  it('serves the renderer whole, from the service itself', async () => {
    const response = await api.call('/docs/assets/redoc.standalone.js');
    expect(response.status).toBe(200);
    expect(Number(response.headers['content-length'])).toBeGreaterThan(100_000);
    expect(response.text).toContain('Redoc');
  });

  it('has no other files under /docs: an unknown asset is 404 not_found in the error shape', async () => {
    const response = await rawRequest(api.url, '/docs/assets/../../package.json');
    expect(response.status).toBe(404);
    const unknown = await api.call('/docs/assets/other.js');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
  });
});
