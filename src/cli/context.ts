import { Option } from 'commander';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import { InputError } from '../input-error.ts';
import { integrationContext, type IntegrationContext } from '../integrations/context.ts';
import { createLogger } from '../logger.ts';
import { requireSecretBox, type SecretBox } from '../webhooks/secret-box.ts';

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Opens the configured database; called only by commands that need it. */
  openDb(): Promise<Database>;
  config: Config;
  /** Whether the embedded database's data directory may hold the webhook secret key. */
  secretKeyFromDataDir?: boolean;
  /** Resolves when a long-running command (the worker) should stop; SIGTERM or SIGINT by default. */
  untilStopped?: () => Promise<string>;
  /** Certificates the worker and redelivery trust besides the default store (tests). */
  trustedCertificates?: string[];
}

export interface Output {
  json?: boolean;
}

/** What every command group gets: the io, the database opened (and migrated) on first use, output. */
export interface CliContext {
  readonly io: CliIo;
  readonly config: Config;
  /** The database, opened and migrated on first use and closed when the command ends. */
  database(): Promise<Database>;
  /** The database opened without migrating it (the migrate command itself). */
  openUnmigrated(): Promise<Database>;
  secretBox(): Promise<SecretBox>;
  /** The integration operations' context (src/integrations) over the database. */
  integrations(): Promise<IntegrationContext>;
  /** Prints `result` as one JSON line with --json, `text` otherwise. */
  print(options: Output, result: unknown, text: string): void;
  /**
   * The command did what it was asked and its outcome is a failure (an attempt the receiver did not
   * accept): what it printed stands, and the run exits 1 so that a script learns it.
   */
  failed(): void;
  readonly exitCode: number;
  close(): Promise<void>;
}

export function createContext(io: CliIo): CliContext {
  let db: Database | null = null;
  let exitCode = 0;
  const open = async () => (db ??= await io.openDb());
  const ctx: CliContext = {
    io,
    config: io.config,
    async database() {
      const opened = db;
      if (opened) return opened;
      const fresh = await open();
      await migrate(fresh);
      return fresh;
    },
    openUnmigrated: open,
    secretBox: () => requireSecretBox(io.config, { embeddedDataDir: io.secretKeyFromDataDir ?? false }),
    async integrations() {
      return integrationContext({
        db: await ctx.database(),
        config: io.config,
        logger: createLogger('silent'),
        secretBox: () => ctx.secretBox(),
        trustedCertificates: io.trustedCertificates,
      });
    },
    print(options, result, text) {
      io.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${text}\n`);
    },
    failed() {
      exitCode = 1;
    },
    get exitCode() {
      return exitCode;
    },
    async close() {
      const opened = db;
      db = null;
      if (opened) await opened.close();
    },
  };
  return ctx;
}

export const jsonOption = () => new Option('--json', 'print the result as JSON');

/**
 * `--member` on a command that changes a key, an endpoint or a feed: the owner or admin on whose
 * behalf, checked and recorded in the audit. Without it the operator acts, as before it existed.
 */
export const memberOption = () =>
  new Option('--member <email>', 'e-mail of the owner or admin on whose behalf (checked and recorded in the audit; without it the operator acts, which is deprecated)');

/** A commander argument parser that refuses blank values with a clear message. */
export function nonEmpty(label: string) {
  return (value: string) => {
    if (value.trim() === '') throw new InputError(`${label} must not be empty`);
    return value.trim();
  };
}
