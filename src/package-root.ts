import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The directory of the service's package.json. The service runs from TypeScript sources in tests
 * and from `dist/` once built, so files it reads at run time (SDL, the OpenAPI document,
 * migrations, the demo fixture) are found from the package root, never relative to the module.
 */
function findPackageRoot(from: string): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json above ${from}`);
  }
}

export const PACKAGE_ROOT = findPackageRoot(fileURLToPath(import.meta.url));

/** A file or directory shipped with the service, by its path from the package root. */
export function packagePath(...segments: string[]): string {
  return join(PACKAGE_ROOT, ...segments);
}
