import type { Command } from 'commander';
import { createApiKey, listApiKeys, revokeApiKey, rotateApiKey } from '../../auth/api-key-store.ts';
import { assertWorkspaceExists } from '../../workspaces/workspace-store.ts';
import { jsonOption, type CliContext, type Output } from '../context.ts';

export function registerKeyCommands(program: Command, ctx: CliContext): void {
  const key = program.command('key').description('API keys');
  key
    .command('create')
    .description('create an API key on behalf of an owner or admin (the key is shown only now)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--member <email>', 'e-mail of the owner or admin creating it')
    .requiredOption('--scopes <list>', 'comma-separated: courses:read, bookings:read, participants:read')
    .option('--name <name>', 'a name to recognise the key by')
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; member: string; scopes: string; name?: string }) => {
      const issued = await createApiKey(await ctx.database(), {
        workspaceId: options.workspace,
        memberEmail: options.member,
        scopes: options.scopes,
        name: options.name,
      });
      ctx.print(options, issued, `Key ${issued.id} (${issued.scopes.join(', ')}):\n${issued.key}\nIt is shown only now.`);
    });
  key
    .command('list')
    .description('list the keys of a workspace (no secrets)')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string }) => {
      const db = await ctx.database();
      await assertWorkspaceExists(db, options.workspace);
      const keys = await listApiKeys(db, options.workspace);
      const lines = keys.map((k) => `${k.id}  ${k.state.padEnd(7)}  …${k.last4}  ${k.scopes.join(',')}  ${k.name}  last used ${k.lastUsedAt ?? 'never'}${k.tagged ? '' : '  (issued before tags: rotate to renew)'}`);
      ctx.print(options, keys, lines.join('\n') || 'No keys');
    });
  key
    .command('revoke')
    .description('revoke a key at once')
    .requiredOption('--id <id>', 'key id')
    .addOption(jsonOption())
    .action(async (options: Output & { id: string }) => {
      const result = await revokeApiKey(await ctx.database(), options.id);
      ctx.print(options, result, `Key ${result.id} revoked`);
    });
  key
    .command('rotate')
    .description('replace a key by a new one with the same name and scopes; the old one stops working at once')
    .requiredOption('--id <id>', 'key id')
    .addOption(jsonOption())
    .action(async (options: Output & { id: string }) => {
      const result = await rotateApiKey(await ctx.database(), options.id);
      ctx.print(options, result, `Key ${result.id} replaces ${options.id}:\n${result.key}\nIt is shown only now.`);
    });
}
