import type { Command } from 'commander';
import { actorByTarget } from '../../integrations/actor.ts';
import { keyLog, keyUsage, MAX_LOG_LIMIT } from '../../integrations/keys.ts';
import { jsonOption, memberOption, type CliContext, type Output } from '../context.ts';

/** `key log` and `key usage`: what the request log and the daily counts hold of one key. */
export function registerKeyActivityCommands(key: Command, ctx: CliContext): void {
  key
    .command('log')
    .description("a key's recent requests, newest first: time, method, path, status, error code, duration, request id, client network, cache")
    .requiredOption('--id <id>', 'key id')
    .option('--since <time>', 'only requests since this ISO 8601 time, or this long ago (2h, 3d)')
    .option('--status <code|class>', 'only answers with this status (429) or class (4xx)')
    .option('--limit <n>', `at most this many rows (1 to ${MAX_LOG_LIMIT})`, '100')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { id: string; member?: string; since?: string; status?: string; limit: string }) => {
      const integrations = await ctx.integrations();
      const actor = await actorByTarget(integrations.db, 'key', options.id, options.member ?? null, 'cli');
      const rows = await keyLog(integrations, actor, options.id, options);
      const lines = rows.map(
        (r) =>
          `${r.requestedAt}  ${r.method.padEnd(4)}  ${r.path}  ${r.status}  ${r.errorCode ?? '-'}  ${r.durationMs} ms  ${r.requestId}  ${r.clientNetwork ?? '-'}  ${r.cache ?? '-'}`,
      );
      ctx.print(options, rows, lines.join('\n') || 'No requests logged');
    });
  key
    .command('usage')
    .description("a key's requests per day (UTC, newest first): the total, by status class, and 429s")
    .requiredOption('--id <id>', 'key id')
    .option('--days <n>', 'how many days back, today included', '7')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { id: string; member?: string; days: string }) => {
      const integrations = await ctx.integrations();
      const actor = await actorByTarget(integrations.db, 'key', options.id, options.member ?? null, 'cli');
      const usage = await keyUsage(integrations, actor, options.id, options.days);
      const lines = [
        'day         requests  2xx  3xx  4xx  5xx  429  not logged',
        ...usage.map((d) => `${d.day}  ${String(d.requests).padStart(8)}  ${d.status2xx}  ${d.status3xx}  ${d.status4xx}  ${d.status5xx}  ${d.rateLimited}  ${d.notLogged}`),
      ];
      ctx.print(options, usage, lines.join('\n'));
    });
}
