import type { Command } from 'commander';
import type { ApiKeySummary } from '../../auth/api-key-store.ts';
import { InputError } from '../../input-error.ts';
import { actorByTarget } from '../../integrations/actor.ts';
import { createKey, listKeys, revokeKey, rotateKey, updateKey } from '../../integrations/keys.ts';
import { jsonOption, memberOption, type CliContext, type Output } from '../context.ts';
import { registerKeyActivityCommands } from './key-activity.ts';

function describeKey(k: ApiKeySummary): string {
  return (
    `${k.id}  ${k.state.padEnd(7)}  …${k.last4}  ${k.scopes.join(',')}  ${k.name}` +
    `  last used ${k.lastUsedAt ? `${k.lastUsedAt}${k.lastUsedNetwork ? ` from ${k.lastUsedNetwork}` : ''}` : 'never'}` +
    `${k.expiresAt ? `  ${k.state === 'expired' ? 'expired' : 'expires'} ${k.expiresAt}` : ''}` +
    `${k.allowedIps ? `  allowed from ${k.allowedIps.join(',')}` : ''}` +
    `${k.tagged ? '' : '  (issued before tags: rotate to renew)'}`
  );
}

export function registerKeyCommands(program: Command, ctx: CliContext): void {
  const key = program.command('key').description('API keys');
  key
    .command('create')
    .description('create an API key on behalf of an owner or admin (the key is shown only now)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--member <email>', 'e-mail of the owner or admin creating it')
    .requiredOption('--scopes <list>', 'comma-separated: courses:read, bookings:read, participants:read')
    .option('--name <name>', 'a name to recognise the key by')
    .option('--expires-in <duration>', 'the key stops working this long from now: a whole number and m, h, d or w (30d, 12h); rotation keeps it')
    .option('--expires-at <time>', 'the key stops working at this ISO 8601 time with a time zone (2026-12-31T23:00:00Z)')
    .option('--allow-ip <list>', `the only addresses it may be used from: comma-separated IPv4 and IPv6 addresses or CIDR ranges, at most 100`)
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; member: string; scopes: string; name?: string; expiresIn?: string; expiresAt?: string; allowIp?: string }) => {
      const issued = await createKey(
        await ctx.integrations(),
        { workspaceId: options.workspace, memberEmail: options.member, source: 'cli' },
        { scopes: options.scopes, name: options.name, expiresIn: options.expiresIn, expiresAt: options.expiresAt, allowedIps: options.allowIp },
      );
      const policy = `${issued.expiresAt ? `\nIt expires ${issued.expiresAt}.` : ''}${issued.allowedIps ? `\nIt is accepted only from ${issued.allowedIps.join(', ')}.` : ''}`;
      ctx.print(options, issued, `Key ${issued.id} (${issued.scopes.join(', ')}):\n${issued.key}\nIt is shown only now.${policy}`);
    });
  key
    .command('list')
    .description('list the keys of a workspace (no secrets): state, expiry, allow list, last use')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; member?: string }) => {
      const keys = await listKeys(await ctx.integrations(), { workspaceId: options.workspace, memberEmail: options.member ?? null, source: 'cli' });
      ctx.print(options, keys, keys.map(describeKey).join('\n') || 'No keys');
    });
  key
    .command('update')
    .description("change a key's name, scopes, expiry or allow list; every instance applies it within a second")
    .requiredOption('--id <id>', 'key id')
    .addOption(memberOption())
    .option('--name <name>', 'a new name')
    .option('--scopes <list>', 'the scopes it has from now on, comma-separated')
    .option('--expires-in <duration>', 'it stops working this long from now: a whole number and m, h, d or w')
    .option('--expires-at <time>', 'it stops working at this ISO 8601 time with a time zone')
    .option('--no-expiry', 'it no longer expires')
    .option('--allow-ip <list>', 'the only addresses it may be used from: comma-separated IPv4 and IPv6 addresses or CIDR ranges, at most 100')
    .option('--allow-any-ip', 'remove the allow list: the key may be used from any address')
    .addOption(jsonOption())
    .action(
      async (
        options: Output & { id: string; member?: string; name?: string; scopes?: string; expiresIn?: string; expiresAt?: string; expiry: boolean; allowIp?: string; allowAnyIp?: boolean },
      ) => {
        if (options.allowIp !== undefined && options.allowAnyIp !== undefined) throw new InputError('Give --allow-ip <list> or --allow-any-ip, not both');
        const integrations = await ctx.integrations();
        const actor = await actorByTarget(integrations.db, 'key', options.id, options.member ?? null, 'cli');
        const allowedIps = options.allowAnyIp ? null : options.allowIp;
        const updated = await updateKey(integrations, actor, options.id, {
          name: options.name,
          scopes: options.scopes,
          expiresIn: options.expiresIn,
          expiresAt: options.expiresAt,
          neverExpires: !options.expiry,
          allowedIps,
        });
        // What was asked to change, as it is now.
        const changed = {
          id: updated.id,
          ...(options.name !== undefined ? { name: updated.name } : {}),
          ...(options.scopes !== undefined ? { scopes: updated.scopes } : {}),
          ...(options.expiresIn !== undefined || options.expiresAt !== undefined || !options.expiry ? { expiresAt: updated.expiresAt } : {}),
          ...(allowedIps !== undefined ? { allowedIps: updated.allowedIps } : {}),
        };
        const policy = allowedIps === undefined ? '' : ` ${updated.allowedIps ? `is accepted only from ${updated.allowedIps.join(', ')}` : 'is accepted from any address'}`;
        ctx.print(options, changed, `Key ${updated.id}${policy}${allowedIps === undefined ? ' updated' : ''}`);
      },
    );
  key
    .command('revoke')
    .description('revoke a key at once')
    .requiredOption('--id <id>', 'key id')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { id: string; member?: string }) => {
      const integrations = await ctx.integrations();
      const result = await revokeKey(integrations, await actorByTarget(integrations.db, 'key', options.id, options.member ?? null, 'cli'), options.id);
      ctx.print(options, result, `Key ${result.id} revoked`);
    });
  key
    .command('rotate')
    .description('replace a key by a new one with the same name, scopes, allow list and lifetime; the old one stops working at once')
    .requiredOption('--id <id>', 'key id')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { id: string; member?: string }) => {
      const integrations = await ctx.integrations();
      const result = await rotateKey(integrations, await actorByTarget(integrations.db, 'key', options.id, options.member ?? null, 'cli'), options.id);
      ctx.print(options, result, `Key ${result.id} replaces ${options.id}:\n${result.key}\nIt is shown only now.${result.expiresAt ? `\nIt expires ${result.expiresAt}.` : ''}`);
    });
  registerKeyActivityCommands(key, ctx);
}
