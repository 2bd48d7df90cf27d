import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * What a production install (`npm ci`, then `npm prune --omit=dev`) holds, read from the lockfile:
 * the packages that are not development dependencies.
 */
const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
  packages: Record<string, { version?: string; dev?: boolean }>;
};
const production = Object.entries(lock.packages).filter(([path, entry]) => path !== '' && !entry.dev);
const copiesOf = (name: string) => production.filter(([path]) => path === `node_modules/${name}` || path.endsWith(`/node_modules/${name}`));

describe('a production install', () => {
  it('holds one copy of @opentelemetry/core, which every OpenTelemetry package shares', () => {
    expect(copiesOf('@opentelemetry/core').map(([path, entry]) => `${path}@${entry.version}`)).toHaveLength(1);
  });

  it('holds no Redoc: the build copies its browser bundle into dist/reference, which /docs serves', () => {
    expect(copiesOf('redoc')).toEqual([]);
    expect(copiesOf('styled-components')).toEqual([]);
  });
});
