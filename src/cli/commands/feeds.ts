import type { Command } from 'commander';
import { actorByTarget } from '../../integrations/actor.ts';
import { createFeed, listFeeds, revokeFeed } from '../../integrations/feeds.ts';
import { jsonOption, memberOption, type CliContext, type Output } from '../context.ts';

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
      const issued = await createFeed(await ctx.integrations(), { workspaceId: options.workspace, memberEmail: options.member, source: 'cli' }, { name: options.name });
      ctx.print(options, issued, `Feed ${issued.id}: ${issued.path}\nThe token is shown only now.`);
    });
  feed
    .command('list')
    .description('list the feed tokens of a workspace (no secrets)')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; member?: string }) => {
      const feeds = await listFeeds(await ctx.integrations(), { workspaceId: options.workspace, memberEmail: options.member ?? null, source: 'cli' });
      ctx.print(options, feeds, feeds.map((f) => `${f.id}  ${f.state.padEnd(7)}  …${f.last4}  ${f.name}`).join('\n') || 'No feeds');
    });
  feed
    .command('revoke')
    .description('revoke a feed token at once')
    .requiredOption('--id <id>', 'feed id')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { id: string; member?: string }) => {
      const integrations = await ctx.integrations();
      const result = await revokeFeed(integrations, await actorByTarget(integrations.db, 'feed', options.id, options.member ?? null, 'cli'), options.id);
      ctx.print(options, result, `Feed ${result.id} revoked`);
    });
}
