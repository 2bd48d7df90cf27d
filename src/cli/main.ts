import { ConfigError, loadConfig, preparedStatementsSetting } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { runCli } from './run-cli.ts';

let config;
try {
  config = loadConfig();
} catch (error) {
  process.stderr.write(`error: ${error instanceof ConfigError ? error.message : String(error)}\n`);
  process.exit(2);
}

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
