import type { Command } from 'commander';
import { createFeedToken, listFeedTokens, revokeFeedToken } from '../../calendar/feed-token-store.ts';
import { assertWorkspaceExists } from '../../workspaces/workspace-store.ts';
import { jsonOption, type CliContext, type Output } from '../context.ts';

export function registerFeedCommands(program: Command, ctx: CliContext): void {
  const feed = program.command('feed').description('calendar feed tokens');
  feed
    .command('create')
    .description('create a calendar feed token on behalf of an owner or admin (shown only now)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--member <email>', 'e-mail of the owner or admin creating it')
    .option('--name <name>', 'a name to recognise the feed by')
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; member: string; name?: string }) => {
      const issued = await createFeedToken(await ctx.database(), { workspaceId: options.workspace, memberEmail: options.member, name: options.name });
      ctx.print(options, issued, `Feed ${issued.id}: ${issued.path}\nThe token is shown only now.`);
    });
  feed
    .command('list')
    .description('list the feed tokens of a workspace (no secrets)')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string }) => {
      const db = await ctx.database();
      await assertWorkspaceExists(db, options.workspace);
      const feeds = await listFeedTokens(db, options.workspace);
      ctx.print(options, feeds, feeds.map((f) => `${f.id}  ${f.state.padEnd(7)}  …${f.last4}  ${f.name}`).join('\n') || 'No feeds');
    });
  feed
    .command('revoke')
    .description('revoke a feed token at once')
    .requiredOption('--id <id>', 'feed id')
    .addOption(jsonOption())
    .action(async (options: Output & { id: string }) => {
      const result = await revokeFeedToken(await ctx.database(), options.id);
      ctx.print(options, result, `Feed ${result.id} revoked`);
    });
}
