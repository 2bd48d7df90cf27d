import { existsSync } from 'node:fs';
import { ApiError } from '../../src/errors.ts';
import { packagePath } from '../../src/package-root.ts';
import { sendText, setRequestHeaders } from '../pipeline/answers.ts';
import type { Route } from '../pipeline/route-table.ts';

/**
 * Redoc's self-contained browser build, copied into dist/ by `npm run build`
 * (openapi/build-reference.ts): the page needs nothing from any other origin, and Redoc is a
 * development dependency, not installed in production.
 */
const REDOC_BUNDLE = packagePath('dist', 'reference', 'redoc.standalone.js');

export const API_REFERENCE_PATH = '/docs';
export const REDOC_ASSET_PATH = '/docs/assets/redoc.standalone.js';

/**
 * Only this origin may provide scripts, styles, data and images. Redoc's styles are injected as
 * `<style>` elements (styled-components) and its search index runs in a worker made from a blob,
 * hence `'unsafe-inline'` for styles and `blob:` for workers. Its side menu shows a logo from the
 * vendor's CDN: `img-src 'self'` keeps the browser from fetching it.
 */
export const API_REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// Redoc reads its options from the element's attributes; no inline script is needed.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Course booking public API v1 (Beta): reference</title>
</head>
<body>
<redoc spec-url="/openapi/public-v1.yaml" required-props-first="true" sort-props-alphabetically="false"></redoc>
<script src="${REDOC_ASSET_PATH}"></script>
</body>
</html>
`;

/**
 * `/docs`, the API reference rendered from the served OpenAPI document, its script, and
 * `/openapi/public-v1.yaml`, the document itself: without authentication.
 */
export function apiReferenceRoutes(openapiYaml: string): Route[] {
  return [
    {
      name: '/openapi/public-v1.yaml',
      path: '/openapi/public-v1.yaml',
      methods: 'read',
      steps: [(state) => sendText(state, 200, 'application/yaml; charset=utf-8', openapiYaml)],
    },
    {
      name: API_REFERENCE_PATH,
      path: API_REFERENCE_PATH,
      strict: true,
      methods: 'read',
      steps: [(state) => sendText(state, 200, 'text/html; charset=utf-8', PAGE, ['Content-Security-Policy', API_REFERENCE_CSP, 'Cache-Control', 'no-cache'])],
    },
    {
      name: REDOC_ASSET_PATH,
      path: REDOC_ASSET_PATH,
      strict: true,
      methods: 'read',
      steps: [
        (state) => {
          if (!existsSync(REDOC_BUNDLE)) throw new ApiError('not_found', 'The API reference is not built: `npm run build` copies its script into dist/reference.');
          // Sent by express (validators, ranges, conditional GET) with the request's own headers.
          setRequestHeaders(state);
          return new Promise<void>((resolve, reject) => {
            state.res.sendFile(REDOC_BUNDLE, { maxAge: '1h', headers: { 'Content-Type': 'text/javascript; charset=utf-8' } }, (error) => (error ? reject(error) : resolve()));
          });
        },
      ],
    },
  ];
}
