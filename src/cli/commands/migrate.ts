import type { Command } from 'commander';
import { migrate } from '../../db/migrate.ts';
import { jsonOption, type CliContext, type Output } from '../context.ts';

export function registerMigrateCommand(program: Command, ctx: CliContext): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .addOption(jsonOption())
    .action(async (options: Output) => {
      const result = await migrate(await ctx.openUnmigrated());
      ctx.print(options, result, result.applied.length ? `Applied: ${result.applied.join(', ')}` : 'Nothing to apply');
    });
}
