import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  // One graphql instance: libraries loaded by Node require its CommonJS build, so the code under
  // test must get the same one (graphql refuses schemas from "another module or realm").
  resolve: { alias: { graphql: require.resolve('graphql') } },
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/support/no-secrets-in-logs.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most test time is spent waiting on databases and child processes, not on the CPU.
    maxWorkers: 3,
  },
});
