import { existsSync, readFileSync } from 'node:fs';
import { ApiError } from '../../src/errors.ts';
import { packagePath } from '../../src/package-root.ts';
import { sendText, setRequestHeaders } from '../pipeline/answers.ts';
import type { Route } from '../pipeline/route-table.ts';

/** Built by `npm run build` (integrations-page/build.ts): the script and stylesheet, named by their hash, and the manifest naming them. */
const BUILT = packagePath('dist', 'integrations-page');

export const INTEGRATIONS_PAGE_PATH = '/integrations';
export const INTEGRATIONS_ASSETS_PATH = '/integrations/assets/';

/**
 * Only this origin provides the page's script, style, data and requests; no inline script or
 * style, no form posts anywhere, no `<base>`. Which pages may frame it is the operator's choice
 * (`PORTAL_FRAME_ANCESTORS`), none by default.
 */
export function integrationsPageCsp(frameAncestors: readonly string[]): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'"}`,
  ].join('; ');
}

interface Manifest {
  script: string;
  style: string;
}

function readManifest(): Manifest | null {
  const file = `${BUILT}/manifest.json`;
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Manifest) : null;
}

const notBuilt = () => new ApiError('not_found', 'The integrations page is not built: `npm run build` builds it into dist/integrations-page.');

// The link's secret arrives in the fragment, which the browser never sends: the page's script reads it.
const page = (manifest: Manifest) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Integrations</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${INTEGRATIONS_ASSETS_PATH}${manifest.style}">
<script type="module" src="${INTEGRATIONS_ASSETS_PATH}${manifest.script}"></script>
</head>
<body>
<div id="integrations"><p>Opening the integrations area…</p></div>
<noscript>The integrations page needs JavaScript.</noscript>
</body>
</html>
`;

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

/**
 * `/integrations/`, the page of a workspace's keys, webhooks and feeds (docs/integrations-area.md),
 * and its two assets; no authentication: the page holds no data, and its script trades the link
 * in the address's fragment for a session.
 */
export function integrationsPageRoutes(frameAncestors: readonly string[]): Route[] {
  const manifest = readManifest();
  const html = manifest ? page(manifest) : null;
  const assets = new Set(manifest ? [manifest.script, manifest.style] : []);
  const headers = ['Content-Security-Policy', integrationsPageCsp(frameAncestors), 'Cache-Control', 'no-store'];
  // Browsers without CSP's frame-ancestors keep to this; with a list of origins, CSP alone decides.
  if (frameAncestors.length === 0) headers.push('X-Frame-Options', 'DENY');
  return [
    {
      name: '/integrations/',
      path: INTEGRATIONS_PAGE_PATH,
      methods: 'read',
      steps: [
        (state) => {
          if (html === null) throw notBuilt();
          sendText(state, 200, 'text/html; charset=utf-8', html, headers);
        },
      ],
    },
    {
      name: '/integrations/assets/{file}',
      path: INTEGRATIONS_ASSETS_PATH,
      parameter: true,
      strict: true,
      methods: 'read',
      steps: [
        (state) => {
          // Only the files the manifest names: the path never reaches the file system otherwise.
          if (!assets.has(state.param)) throw manifest ? new ApiError('not_found') : notBuilt();
          setRequestHeaders(state);
          return new Promise<void>((resolve, reject) => {
            state.res.sendFile(`${BUILT}/${state.param}`, { maxAge: '365d', immutable: true, headers: { 'Content-Type': TYPES[state.param.slice(state.param.lastIndexOf('.') + 1)]! } }, (error) =>
              error ? reject(error) : resolve(),
            );
          });
        },
      ],
    },
  ];
}
