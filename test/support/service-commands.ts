import { readFileSync } from 'node:fs';

export const ROOT = new URL('../..', import.meta.url).pathname;

const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

function nodeArguments(script: string): string[] {
  const [program, ...args] = scripts[script]!.split(/\s+/);
  if (program !== 'node') throw new Error(`npm run ${script} does not run node: ${scripts[script]}`);
  return args;
}

/**
 * The node arguments of `npm start` and `npm run admin`, read from package.json: processes the suite
 * starts run the built JavaScript exactly as the service runs (`npm test` builds it first).
 */
export const START_ARGUMENTS = nodeArguments('start');
export const ADMIN_ARGUMENTS = nodeArguments('admin');

/** The commands `npm run build` runs, in order: each runs only when the one before it succeeded. */
export const BUILD_STEPS = scripts.build!.split(' && ');

/** A built module of the service, for a child process that imports it directly. */
export function builtModule(sourcePath: string): string {
  return new URL(`../../dist/${sourcePath.replace(/\.ts$/, '.js')}`, import.meta.url).pathname;
}
