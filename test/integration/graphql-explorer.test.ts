import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_QUERY, DEFAULT_VARIABLES } from '../../explorer/default-query.ts';
import type { Database } from '../../src/db/database.ts';
import { rawRequest } from '../support/http.ts';
import { INTERNAL_TOKEN, type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';

/** What Chromium sends when it opens a page. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

/** The `src`/`href` values of an HTML page. */
const referencedUrls = (html: string) => [...html.matchAll(/\b(?:src|href)\s*=\s*["']?([^"'\s>]+)/gi)].map((match) => match[1]!);

function directivesOf(csp: string): Map<string, string[]> {
  return new Map(csp.split(';').map((part) => part.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]));
}

describe('the GraphQL explorer of the internal listener', () => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let url: string;
  const get = (path: string, headers: Array<[string, string]> = []) => rawRequest(url, path, { headers });

  beforeAll(async () => {
    ({ db, api } = await sharedTestApi('embedded'));
    ws = await seedWorkspace(db, contractFixture('Explorer', 3));
    url = api.server.internalUrl!;
  });

  it('serves GET /graphql to a browser as an HTML page without a token', async () => {
    const page = await get('/graphql', [['Accept', BROWSER_ACCEPT]]);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['vary']).toBe('Accept');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.text).toContain('<div id="explorer"></div>');
  });

  it('references only its own scripts and styles, each served without a token with its type and the security headers', async () => {
    const { text } = await get('/graphql', [['Accept', 'text/html']]);
    expect(text).not.toMatch(/(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    expect(text).not.toMatch(/<script(?![^>]*\bsrc=)/);
    const urls = referencedUrls(text).filter((reference) => !reference.startsWith('data:'));
    expect(urls.sort()).toEqual(['/explorer/explorer.css', '/explorer/explorer.js']);
    const types: Record<string, string> = { '/explorer/explorer.css': 'text/css; charset=utf-8', '/explorer/explorer.js': 'text/javascript; charset=utf-8' };
    for (const path of [...urls, '/explorer/editor.worker.js', '/explorer/json.worker.js', '/explorer/graphql.worker.js']) {
      const asset = await get(path);
      expect(asset.status, path).toBe(200);
      expect(asset.headers['content-type'], path).toBe(types[path] ?? 'text/javascript; charset=utf-8');
      expect(asset.headers['x-content-type-options'], path).toBe('nosniff');
      expect(asset.headers['referrer-policy'], path).toBe('no-referrer');
      expect(asset.headers['content-security-policy'], path).toBeDefined();
      expect(asset.text, path).not.toMatch(/fonts\.googleapis|unpkg\.com|esm\.sh|cdn\.jsdelivr/);
    }
  });

  it('carries a Content-Security-Policy that allows scripts and workers from the service only and no eval', async () => {
    const page = await get('/graphql', [['Accept', 'text/html']]);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    const directives = directivesOf(page.headers['content-security-policy'] ?? '');
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('worker-src')).toEqual(["'self'"]);
    expect(directives.get('connect-src')).toEqual(["'self'"]);
    expect(directives.get('form-action')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    for (const [name, sources] of directives) {
      for (const source of sources) expect(`${name} ${source}`).toMatch(/ ('self'|'none'|'unsafe-inline'|data:)$/);
    }
    expect(page.headers['content-security-policy']).not.toContain('unsafe-eval');
  });

  it('answers GET /graphql as before when the request does not prefer HTML: 401 without a token, GraphQL with one', async () => {
    for (const accept of [null, '*/*', 'application/json', 'application/graphql-response+json, application/json;q=0.9, text/html;q=0.5']) {
      const refused = await get('/graphql?query=%7B__typename%7D', accept ? [['Accept', accept]] : []);
      expect(refused.status, String(accept)).toBe(401);
      // As Apollo Server negotiates its own answers: the GraphQL media type for a client that prefers it.
      expect(refused.headers['content-type']).toBe(accept?.startsWith('application/graphql-response+json') ? 'application/graphql-response+json; charset=utf-8' : 'application/json; charset=utf-8');
      expect(refused.headers['vary']).toBe('Accept');
      const body: unknown = typeof refused.body === 'string' ? JSON.parse(refused.body) : refused.body;
      expect(body).toEqual({ errors: [{ message: 'A valid internal API token is required.', extensions: { code: 'invalid_api_key' } }] });
    }
    const answered = await get('/graphql?query=%7B__typename%7D', [
      ['Authorization', `Bearer ${INTERNAL_TOKEN}`],
      ['Apollo-Require-Preflight', 'true'],
    ]);
    expect(answered.status).toBe(200);
    // It reads nothing from the database: it costs nothing.
    expect(answered.body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.objectContaining({ estimate: 0, actual: 0 }) } });
    expect(answered.headers['vary']).toMatch(/\bAccept\b/);
  });

  it('answers paths under /explorer that hold no asset with the JSON 404 of every unknown path', async () => {
    for (const path of ['/explorer/nothing.js', '/explorer/', '/explorer', '/explorer/%2e%2e/package.json', '/explorer/..%2f..%2fpackage.json']) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      expect(answer.body, path).toEqual({ error: { code: 'not_found', message: 'No resource exists at this path.' } });
    }
  });

  it('opens with an example query that runs against the schema', async () => {
    const variables = { ...(JSON.parse(DEFAULT_VARIABLES) as Record<string, unknown>), workspaceId: ws.workspaceId };
    const { status, body } = await api.graphql(DEFAULT_QUERY, variables);
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data).toMatchObject({ workspace: { name: expect.any(String), courseRunsConnection: { totalCount: expect.any(Number) } } });
  });
});
