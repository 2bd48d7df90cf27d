import { expect } from 'vitest';
import { runCli } from '../../src/cli/run-cli.ts';
import { loadConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/database.ts';
import type { WebhookReceiver } from './webhook-receiver.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the operator CLI in-process on the test database (its closing of the database is a no-op),
 * with the settings of `env`.
 */
export function cliOn(db: Database, env: Record<string, string> = {}, receiver?: Pick<WebhookReceiver, 'certificate'>) {
  const run = async (...argv: string[]): Promise<CliResult> => {
    let stdout = '';
    let stderr = '';
    const shared = Object.create(db, { close: { value: async () => {} } }) as Database;
    const code = await runCli(argv, {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      openDb: async () => shared,
      config: loadConfig(env),
      ...(receiver ? { trustedCertificates: [receiver.certificate] } : {}),
    });
    return { code, stdout, stderr };
  };
  const json = async <T = Record<string, unknown>>(...argv: string[]): Promise<T> => {
    const result = await run(...argv, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout) as T;
  };
  return { run, json };
}
