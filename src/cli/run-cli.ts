import { Command, CommanderError } from 'commander';
import { isInputError } from '../input-error.ts';
import { isEndpointDisabledError } from '../webhooks/endpoint-store.ts';
import { registerAuditCommands } from './commands/audit.ts';
import { registerFeedCommands } from './commands/feeds.ts';
import { registerImportCommands } from './commands/import.ts';
import { registerInternalTokenCommands } from './commands/internal-tokens.ts';
import { registerKeyCommands } from './commands/keys.ts';
import { registerMemberCommands } from './commands/members.ts';
import { registerMigrateCommand } from './commands/migrate.ts';
import { registerPortalCommands } from './commands/portal.ts';
import { registerWebhookCommands } from './commands/webhooks.ts';
import { registerWorkerCommand } from './commands/worker.ts';
import { registerWorkspaceCommands } from './commands/workspaces.ts';
import { createContext, type CliIo } from './context.ts';

export type { CliIo };

/**
 * The operator CLI. Every command prints JSON with --json; bad input prints `error: …` on stderr,
 * exits non-zero (2 for usage, 1 for refused input) and writes nothing.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const ctx = createContext(io);
  const program = new Command('admin').description('Operator commands of the course booking API').showHelpAfterError(false);
  registerMigrateCommand(program, ctx);
  registerWorkspaceCommands(program, ctx);
  registerMemberCommands(program, ctx);
  registerImportCommands(program, ctx);
  registerKeyCommands(program, ctx);
  registerFeedCommands(program, ctx);
  registerWebhookCommands(program, ctx);
  registerInternalTokenCommands(program, ctx);
  registerPortalCommands(program, ctx);
  registerAuditCommands(program, ctx);
  registerWorkerCommand(program, ctx);
  applyExitOverride(program, io);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0 || error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      return 2;
    }
    io.stderr.write(`error: ${messageOf(error)}\n`);
    // An unexpected failure (not refused input) shows its stack when the log level asks for detail.
    const detailed = io.config.LOG_LEVEL === 'debug' || io.config.LOG_LEVEL === 'trace';
    if (!isInputError(error) && detailed && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
    return 1;
  } finally {
    await ctx.close();
  }
}

/** What the operator reads of a failure: the error's message, with the command that helps where there is one. */
function messageOf(error: unknown): string {
  if (isEndpointDisabledError(error)) return `${error.message} (webhook enable --endpoint ${error.endpointId})`;
  return error instanceof Error ? error.message : String(error);
}

function applyExitOverride(command: Command, io: CliIo): void {
  command.exitOverride().configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) });
  for (const sub of command.commands) applyExitOverride(sub, io);
}
