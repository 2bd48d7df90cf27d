import type { Command } from 'commander';
import { createInternalToken, listInternalTokens, parseWorkspaceList, revokeInternalToken } from '../../auth/internal-token-store.ts';
import { InputError } from '../../input-error.ts';
import { jsonOption, nonEmpty, type CliContext, type Output } from '../context.ts';

export function registerInternalTokenCommands(program: Command, ctx: CliContext): void {
  const token = program.command('internal-token').description('named tokens of the internal GraphQL listener');
  token
    .command('create')
    .description('create a named internal token, optionally restricted to workspaces (the token is shown only now)')
    .requiredOption('--name <name>', 'a unique name; the audit trail records it with every request', nonEmpty('--name'))
    .option('--workspaces <ids>', 'comma-separated workspace ids the token may read (default: every workspace)', parseWorkspaceList)
    .addOption(jsonOption())
    .action(async (options: Output & { name: string; workspaces?: string[] }) => {
      const issued = await createInternalToken(await ctx.database(), { name: options.name, workspaces: options.workspaces });
      const scope = issued.workspaces ? `workspaces ${issued.workspaces.join(', ')}` : 'every workspace';
      ctx.print(options, issued, `Internal token ${issued.id} "${issued.name}" (${scope}):\n${issued.token}\nIt is shown only now.`);
    });
  token
    .command('list')
    .description('list the internal tokens (no secrets)')
    .addOption(jsonOption())
    .action(async (options: Output) => {
      const tokens = await listInternalTokens(await ctx.database());
      const lines = tokens.map((t) => `${t.id}  ${t.state.padEnd(7)}  …${t.last4}  ${t.name}  ${t.workspaces ? t.workspaces.join(',') : 'every workspace'}  created ${t.createdAt}`);
      ctx.print(options, tokens, lines.join('\n') || 'No internal tokens');
    });
  token
    .command('revoke')
    .description('revoke an internal token at once, by id or by name')
    .option('--id <id>', 'token id', nonEmpty('--id'))
    .option('--name <name>', 'name of an active token', nonEmpty('--name'))
    .addOption(jsonOption())
    .action(async (options: Output & { id?: string; name?: string }) => {
      if ((options.id === undefined) === (options.name === undefined)) throw new InputError('Give either --id or --name');
      const revoked = await revokeInternalToken(await ctx.database(), options.id !== undefined ? { id: options.id } : { name: options.name! });
      ctx.print(options, revoked, `Internal token ${revoked.id} "${revoked.name}" revoked`);
    });
}
