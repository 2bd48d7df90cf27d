import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * Every package the lockfile installs, development ones included, declares that it runs on the
 * oldest Node the service supports (`engines.node` of package.json): CI runs the suite on Node 20,
 * and a package whose release needs Node 22 is held at the one before (docs/architecture.md).
 */
const read = (file: string) => JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')) as unknown;
const manifest = read('package.json') as { engines: { node: string } };
const lock = read('package-lock.json') as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };

describe('the installed packages', () => {
  const oldest = semver.minVersion(manifest.engines.node);

  it('declare a range for the oldest supported Node', () => {
    expect(oldest?.version).toMatch(/^20\./);
  });

  it('each run on the oldest supported Node by their own engines.node', () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && !Array.isArray(entry.engines) && entry.engines?.node !== undefined)
      .filter(([, entry]) => !semver.satisfies(oldest!, (entry.engines as { node: string }).node))
      .map(([path, entry]) => `${path}@${entry.version} needs node ${(entry.engines as { node: string }).node}`);
    expect(refusing).toEqual([]);
  });
});
