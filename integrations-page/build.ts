import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { build } from 'esbuild';

/**
 * Builds the integrations page into dist/integrations-page (`npm run build`): its script and
 * stylesheet, named by their content's hash, and manifest.json, which names them for the page
 * the public listener serves (rest/routes/integrations-page.ts). Nothing is loaded from another host.
 */
const root = new URL('..', import.meta.url).pathname;
const outdir = `${root}dist/integrations-page`;

await rm(outdir, { recursive: true, force: true });
await mkdir(outdir, { recursive: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { page: 'integrations-page/main.ts' },
  entryNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome115', 'firefox115', 'safari16.4', 'edge115'],
  outdir,
  metafile: true,
  logLevel: 'warning',
});
const files = Object.keys(result.metafile.outputs).map((file) => basename(file));
const script = files.find((file) => file.endsWith('.js'));
const style = files.find((file) => file.endsWith('.css'));
if (!script || !style) throw new Error(`the integrations page's build made ${files.join(', ')}, not a script and a stylesheet`);
await writeFile(`${outdir}/manifest.json`, `${JSON.stringify({ script, style }, null, 2)}\n`);
