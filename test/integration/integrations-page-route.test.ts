import { beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/http.ts';
import { type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';

const PAGE = '/integrations/';

/** The `src` and `href` values of an HTML page. */
const referencedUrls = (html: string) => [...html.matchAll(/\b(?:src|href)\s*=\s*"([^"]+)"/gi)].map((match) => match[1]!);

describe('the integrations page at /integrations/ on the public listener', () => {
  let api: TestApi;
  const get = (path: string, method = 'GET') => rawRequest(api.url, path, { method });

  beforeAll(async () => {
    ({ api } = await sharedTestApi('embedded'));
  });

  it('is served as HTML without authentication, with /integrations as the same page, never stored and setting no cookie', async () => {
    for (const path of [PAGE, '/integrations']) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers).not.toHaveProperty('set-cookie');
      expect(response.text).toContain('<div id="integrations">');
    }
    const head = await get(PAGE, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('has no inline script or style and references only its own hashed assets, each served with its type for a year', async () => {
    const { text } = await get(PAGE);
    expect(text).not.toMatch(/<script(?![^>]*\bsrc=)|<style|\sstyle=|\son[a-z]+=/i);
    const urls = referencedUrls(text).filter((url) => !url.startsWith('data:'));
    expect(urls).toHaveLength(2);
    for (const url of urls) {
      expect(url).toMatch(/^\/integrations\/assets\/page-[A-Z0-9]{8}\.(js|css)$/);
      const response = await get(url);
      expect(response.status, url).toBe(200);
      expect(response.headers['content-type'], url).toBe(url.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(response.headers['cache-control'], url).toBe('public, max-age=31536000, immutable');
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('carries a strict policy: this origin only, no inline code, no base or form targets, and no frame by default', async () => {
    const response = await get(PAGE);
    expect(response.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(response.headers['x-frame-options']).toBe('DENY');
  });

  it('serves no other file under its assets path, whatever the name: 404 in the contract\'s shape', async () => {
    for (const path of ['/integrations/assets/manifest.json', '/integrations/assets/..%2F..%2Fpackage.json', '/integrations/assets/%2e%2e', '/integrations/assets/', '/integrations/assets/page.js', '/integrations/api']) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      expect(JSON.parse(response.text), path).toMatchObject({ error: { code: 'not_found' } });
    }
  });

  it('answers only GET and HEAD: other methods are no route of the page', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) expect((await get(PAGE, method)).status, method).toBe(404);
  });
});
