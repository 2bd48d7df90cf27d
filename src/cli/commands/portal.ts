import type { Command } from 'commander';
import { createPortalLink, DEFAULT_PORTAL_TTL, revokePortal } from '../../integrations/portal.ts';
import { jsonOption, memberOption, type CliContext, type Output } from '../context.ts';

export function registerPortalCommands(program: Command, ctx: CliContext): void {
  const portal = program.command('portal').description("links to a workspace's integrations page, and its sessions");
  portal
    .command('link')
    .description('a single-use link to the integrations page for an owner or admin: open it within 10 minutes; its session lasts --ttl')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--member <email>', 'e-mail of the owner or admin the session acts as')
    .option('--read-only', 'a session that sees everything and changes nothing')
    .option('--ttl <duration>', 'how long the session lasts once opened: 30m, 1h … at most 24h', DEFAULT_PORTAL_TTL)
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; member: string; readOnly?: boolean; ttl: string }) => {
      const link = await createPortalLink(await ctx.integrations(), { workspaceId: options.workspace, memberEmail: options.member, source: 'cli' }, { readOnly: options.readOnly ?? false, ttl: options.ttl });
      ctx.print(options, link, `${link.url}\nOpens once, until ${link.expiresAt}; the link is shown only now.`);
    });
  portal
    .command('revoke')
    .description('end every session of the workspace at once, and its links not yet opened')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; member?: string }) => {
      const result = await revokePortal(await ctx.integrations(), { workspaceId: options.workspace, memberEmail: options.member ?? null, source: 'cli' });
      ctx.print(options, result, `${result.revoked} session(s) and link(s) of workspace ${result.workspaceId} revoked`);
    });
}
