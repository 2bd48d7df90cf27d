import { copyFile, mkdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';

/**
 * Copies Redoc's self-contained browser build (and its licence notice) into dist/reference, where
 * the /docs page's script is served from (rest/routes/api-reference.ts): part of `npm run build`,
 * so Redoc is a development dependency and a production install holds only these two files of it.
 */
const require = createRequire(import.meta.url);
const outdir = new URL('../dist/reference/', import.meta.url);
const bundle = require.resolve('redoc/bundles/redoc.standalone.js');

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
for (const file of ['redoc.standalone.js', 'redoc.standalone.js.LICENSE.txt']) await copyFile(bundle.replace(/redoc\.standalone\.js$/, file), new URL(file, outdir));
