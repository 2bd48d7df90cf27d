import { existsSync } from 'node:fs';
import express, { Router, type Response } from 'express';
import { ApiError } from '../errors.ts';
import { SECURITY_HEADERS } from '../http-answers.ts';
import { packagePath } from '../package-root.ts';

/** Where the page's scripts, styles and workers are served, without a token: they hold no data. */
export const EXPLORER_ASSETS_PATH = '/explorer';

/** Built by `npm run build` (explorer/build.ts) from GraphiQL, React and Monaco in node_modules. */
const ASSETS_DIR = packagePath('dist', 'explorer');
const ENTRY = 'explorer.js';

/**
 * Scripts and workers from this origin only, and no eval. Monaco writes its theme and
 * decorations into `<style>` elements it creates at run time, without a nonce: styles need
 * `'unsafe-inline'`, as redoc's do on /docs. GraphiQL's stylesheet inlines Monaco's icon font
 * as a data: URL. Requests go to /graphql on this origin.
 */
export const EXPLORER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// No inline script: the CSP allows none. The module finds its workers next to itself.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Internal GraphQL explorer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${EXPLORER_ASSETS_PATH}/explorer.css">
<script type="module" src="${EXPLORER_ASSETS_PATH}/${ENTRY}"></script>
</head>
<body>
<div id="explorer"></div>
<noscript>The GraphQL explorer needs JavaScript. Without it, POST queries to /graphql with an Authorization: Bearer token.</noscript>
</body>
</html>
`;

/** What the explorer's answers carry besides their body: the listener's security headers and the page's policy. */
function setExplorerHeaders(res: Pick<Response, 'setHeader'>): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
  res.setHeader('Content-Security-Policy', EXPLORER_CSP);
  // Revalidated on every load (ETag): a new build is never mixed with an old one.
  res.setHeader('Cache-Control', 'no-cache');
}

/**
 * `GET /graphql` asked for as HTML (a browser) serves GraphiQL; every other request to /graphql
 * goes on to Apollo Server as before, through the token check. As Apollo Server's own landing
 * page does, the page is chosen when the request prefers `text/html` over GraphQL's JSON types.
 */
export function explorerRouter(): Router {
  const built = existsSync(`${ASSETS_DIR}/${ENTRY}`);
  const router = Router({ caseSensitive: true, strict: true });
  router.get('/graphql', (req, res, next) => {
    // The same URL answers HTML or JSON by the Accept header: a cache must keep them apart.
    res.vary('Accept');
    if (req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) !== 'text/html') return next();
    if (!built) return next(new ApiError('not_found', 'The GraphQL explorer is not built: `npm run build` builds it into dist/explorer.'));
    setExplorerHeaders(res);
    res.type('text/html; charset=utf-8').send(PAGE);
  });
  router.use(
    EXPLORER_ASSETS_PATH,
    express.static(ASSETS_DIR, { index: false, redirect: false, dotfiles: 'ignore', cacheControl: false, setHeaders: setExplorerHeaders }),
  );
  return router;
}
