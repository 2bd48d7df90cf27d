import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import ScratchFirstSequencer from './test/support/scratch-first-sequencer.ts';

const require = createRequire(import.meta.url);

/** Replaces one of the service's own modules (vi.mock): it must get a module registry of its own. */
const MOCKS_MODULES = ['test/integration/rest-recorded-bodies.test.ts'];

/**
 * Hold internal GraphQL to bounds of database time measured by the clock (a request stopped at the
 * cap's time, a burst's spending in a minute): they run after every other file, one at a time, so
 * that the suite's other workers do not lend them their own lateness. Each makes the load it is
 * about itself.
 */
const ALONE = ['test/integration/internal-cost-budgets.test.ts', 'test/integration/internal-cost-units.test.ts', 'test/integration/internal-database-time.test.ts'];

export default defineConfig({
  // One graphql instance: libraries loaded by Node require its CommonJS build, so the code under
  // test must get the same one (graphql refuses schemas from "another module or realm").
  resolve: { alias: { graphql: require.resolve('graphql') } },
  test: {
    setupFiles: ['test/support/no-secrets-in-logs.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    sequence: { sequencer: ScratchFirstSequencer },
    // Most test time is spent waiting on databases and child processes, not on the CPU.
    maxWorkers: 4,
    projects: [
      // The test files of a worker share its loaded modules: loading the service anew for every file
      // cost about 3 s of CPU each. Every test file builds its own state (a workspace, keys of its
      // own); those that only read share their worker's database and server (test/support/shared-api.ts),
      // the others open their own.
      // Unit tests open no connection of any kind (test/support/no-connections.ts refuses them).
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], setupFiles: ['test/support/no-connections.ts'], isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          exclude: [...MOCKS_MODULES, ...ALONE],
          globalSetup: ['test/support/migrated-database.ts'],
          setupFiles: ['test/support/webhook-deliveries-match-the-document.ts'],
          isolate: false,
        },
      },
      { extends: true, test: { name: 'module-mocks', include: MOCKS_MODULES, globalSetup: ['test/support/migrated-database.ts'] } },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          globalSetup: ['test/support/migrated-database.ts'],
          setupFiles: ['test/support/webhook-deliveries-match-the-document.ts'],
          isolate: false,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
