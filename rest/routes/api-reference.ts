import { createRequire } from 'node:module';
import { Router } from 'express';

const require = createRequire(import.meta.url);

/** Redoc's self-contained browser build: the page needs nothing from any other origin. */
const REDOC_BUNDLE = require.resolve('redoc/bundles/redoc.standalone.js');

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

/** `/docs`: the API reference rendered from the served OpenAPI document, without authentication. */
export function apiReferenceRouter(): Router {
  const router = Router({ caseSensitive: true, strict: true });
  router.get(API_REFERENCE_PATH, (_req, res) => {
    res.locals.route = API_REFERENCE_PATH;
    res.set('Content-Security-Policy', API_REFERENCE_CSP);
    res.set('Cache-Control', 'no-cache');
    res.type('text/html; charset=utf-8');
    res.send(PAGE);
  });
  router.get(REDOC_ASSET_PATH, (_req, res, next) => {
    res.locals.route = REDOC_ASSET_PATH;
    res.type('text/javascript; charset=utf-8');
    res.sendFile(REDOC_BUNDLE, { maxAge: '1h', headers: { 'Content-Type': 'text/javascript; charset=utf-8' } }, (error) => {
      if (error) next(error);
    });
  });
  return router;
}
