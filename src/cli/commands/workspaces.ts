import type { Command } from 'commander';
import { createWorkspace } from '../../workspaces/workspace-store.ts';
import { jsonOption, nonEmpty, type CliContext, type Output } from '../context.ts';

export function registerWorkspaceCommands(program: Command, ctx: CliContext): void {
  const workspace = program.command('workspace').description('workspaces');
  workspace
    .command('create')
    .description('create an empty workspace')
    .requiredOption('--name <name>', 'workspace name', nonEmpty('--name'))
    .addOption(jsonOption())
    .action(async (options: Output & { name: string }) => {
      const { id } = await createWorkspace(await ctx.database(), options.name);
      ctx.print(options, { id }, `Workspace ${id}`);
    });
}
