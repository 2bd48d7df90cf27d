import { ConfigError, loadConfig, preparedStatementsSetting } from '../config.ts';
import { startTracing } from '../observability/tracing.ts';

let config;
try {
  config = loadConfig();
} catch (error) {
  process.stderr.write(`error: ${error instanceof ConfigError ? error.message : String(error)}\n`);
  process.exit(2);
}

// Before the commands' modules are imported: the instrumentations patch them as they load.
const tracing = await startTracing(config);
const { openDatabase } = await import('../db/database.ts');
const { runCli } = await import('./run-cli.ts');

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  config,
  secretKeyFromDataDir: !config.DATABASE_URL,
  openDb: () =>
    openDatabase({
      url: config.DATABASE_URL,
      directUrl: config.DATABASE_DIRECT_URL,
      preparedStatements: preparedStatementsSetting(config),
      dataDir: config.DATA_DIR,
      poolSize: 2,
      applicationName: 'course-booking-admin',
    }),
});
process.exitCode = code;
await tracing?.shutdown().catch((error: unknown) => process.stderr.write(`warning: exporting the last spans failed: ${String(error)}\n`));
