import type { Command } from 'commander';
import { auditEntries } from '../../integrations/audit.ts';
import { jsonOption, memberOption, type CliContext, type Output } from '../context.ts';

export function registerAuditCommands(program: Command, ctx: CliContext): void {
  const audit = program.command('audit').description("what was done to a workspace's keys, webhook endpoints and feeds, by whom and how");
  audit
    .command('list')
    .description('the audit entries of a workspace, oldest first (at most the newest 1000): time, member, operation, target, source')
    .requiredOption('--workspace <id>', 'workspace id')
    .option('--since <time>', 'only entries since this ISO 8601 time')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; since?: string; member?: string }) => {
      const entries = await auditEntries(await ctx.integrations(), { workspaceId: options.workspace, memberEmail: options.member ?? null, source: 'cli' }, options.since);
      const lines = entries.map((e) => `${e.at}  ${e.source.padEnd(7)}  ${e.memberEmail ?? '(operator)'}  ${e.operation}  ${e.targetId ?? '-'}`);
      ctx.print(options, entries, lines.join('\n') || 'No audit entries');
    });
}
