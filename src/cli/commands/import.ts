import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { importDemo } from '../../demo/demo.ts';
import { importFixture } from '../../fixtures/import-fixture.ts';
import { InputError } from '../../input-error.ts';
import { jsonOption, type CliContext, type Output } from '../context.ts';

async function readFixtureFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new InputError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

export function registerImportCommands(program: Command, ctx: CliContext): void {
  program
    .command('import')
    .description('import a fixture file in one transaction (a new workspace, or into --workspace)')
    .requiredOption('--file <path>', 'fixture JSON file')
    .option('--workspace <id>', 'add to this existing workspace')
    .addOption(jsonOption())
    .action(async (options: Output & { file: string; workspace?: string }) => {
      const fixture = await readFixtureFile(options.file);
      const result = await importFixture(await ctx.database(), fixture, { workspaceId: options.workspace });
      ctx.print(options, result, `Imported into workspace ${result.workspaceId} (${Object.keys(result.ids).length} records)`);
    });

  program
    .command('demo')
    .description('import the bundled demo workspace')
    .addOption(jsonOption())
    .action(async (options: Output) => {
      const result = await importDemo(await ctx.database());
      ctx.print(options, result, `Demo workspace ${result.workspaceId} (${Object.keys(result.ids).length} records)`);
    });
}
