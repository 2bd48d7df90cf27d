import { createHash } from 'node:crypto';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { build, type BuildOptions, type Plugin } from 'esbuild';

/**
 * Builds the GraphQL explorer of the internal listener into dist/explorer: GraphiQL, React and
 * Monaco bundled from node_modules (`npm run build`, so `npm ci` builds it through `prepare`),
 * served by src/internal-api/explorer-page.ts. The page loads nothing from any other origin.
 */
const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url).pathname;
const outdir = `${root}dist/explorer`;

/** Browsers from mid-2023 on: ES modules and the syntax React 19, GraphiQL 5 and Monaco ship. */
const target = ['chrome115', 'firefox115', 'safari16.4', 'edge115'];

/**
 * Monaco's modules import their own CSS, which graphiql/style.css already holds (with the icon
 * font inlined): those imports are left empty so that the styles are neither doubled nor split
 * into files that no page loads.
 */
const monacoStylesFromGraphiQL: Plugin = {
  name: 'monaco-styles-from-graphiql',
  setup(context) {
    context.onLoad({ filter: /[\\/]node_modules[\\/]monaco-editor[\\/].*\.css$/ }, () => ({ contents: '', loader: 'empty' }));
  },
};

const common: BuildOptions = {
  absWorkingDir: root,
  bundle: true,
  minify: true,
  target,
  outdir,
  logLevel: 'warning',
  define: { 'process.env.NODE_ENV': '"production"' },
};

/**
 * What the bundle is made of: the explorer's sources and the versions of the packages bundled. A
 * build whose bundle was made of the same is skipped (a rebuild after a change elsewhere, or of a
 * copy of the repository with its dist/, costs no bundling).
 */
async function inputsHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of (await readdir(`${root}explorer`)).sort()) {
    if (/\.(tsx?|css|json)$/.test(file)) hash.update(file).update(await readFile(`${root}explorer/${file}`));
  }
  for (const name of ['esbuild', 'graphiql', '@graphiql/toolkit', 'monaco-editor', 'monaco-graphql', 'react', 'react-dom', 'graphql']) {
    hash.update(`${name}@${(JSON.parse(await readFile(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version}`);
  }
  return hash.digest('hex');
}

const inputs = await inputsHash();
const stamp = `${outdir}/.inputs`;
if ((await readFile(stamp, 'utf8').catch(() => null)) === inputs) process.exit(0);

await rm(outdir, { recursive: true, force: true });
await Promise.all([
  build({
    ...common,
    entryPoints: { explorer: 'explorer/main.tsx' },
    format: 'esm',
    // GraphiQL loads Monaco with import(): the page shows before the editor's code has arrived.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [monacoStylesFromGraphiQL],
    // An optional peer of @graphiql/toolkit, imported only for subscriptions over WebSocket, which the explorer does not use.
    external: ['graphql-ws'],
    jsx: 'automatic',
  }),
  build({
    ...common,
    entryPoints: {
      'editor.worker': require.resolve('monaco-editor/esm/vs/editor/editor.worker.js'),
      'json.worker': require.resolve('monaco-editor/esm/vs/language/json/json.worker.js'),
      'graphql.worker': require.resolve('monaco-graphql/esm/graphql.worker.js'),
    },
    format: 'iife',
  }),
]);
await writeFile(stamp, inputs);
