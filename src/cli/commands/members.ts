import { Option, type Command } from 'commander';
import { InputError } from '../../input-error.ts';
import { addMember, type MemberRole } from '../../workspaces/member-store.ts';
import { jsonOption, nonEmpty, type CliContext, type Output } from '../context.ts';

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

export function registerMemberCommands(program: Command, ctx: CliContext): void {
  const member = program.command('member').description('workspace members');
  member
    .command('add')
    .description('add a member to a workspace')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--email <email>', 'e-mail address')
    .requiredOption('--name <name>', 'display name', nonEmpty('--name'))
    .addOption(new Option('--role <role>', 'role').choices(['owner', 'admin', 'member']).makeOptionMandatory())
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; email: string; name: string; role: MemberRole }) => {
      if (!EMAIL.test(options.email)) throw new InputError(`--email ${JSON.stringify(options.email)} is not an e-mail address`);
      const { id } = await addMember(await ctx.database(), {
        workspaceId: options.workspace,
        email: options.email,
        name: options.name,
        role: options.role,
      });
      ctx.print(options, { id }, `Member ${id}`);
    });
}
