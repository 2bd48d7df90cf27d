import type { Command } from 'commander';
import { assertApiKeyExists } from '../../auth/api-key-store.ts';
import { readRequestLog, readUsage } from '../../auth/key-activity-store.ts';
import { parseDuration, parseInstant } from '../../auth/key-policy.ts';
import { InputError } from '../../input-error.ts';
import { jsonOption, type CliContext, type Output } from '../context.ts';

const MAX_LOG_LIMIT = 1000;

function wholeNumber(label: string, text: string, max: number): number {
  if (!/^\s*\d+\s*$/.test(text) || Number(text) < 1 || Number(text) > max) throw new InputError(`${label} ${JSON.stringify(text)} is not a whole number from 1 to ${max}`);
  return Number(text);
}

/** `429` is that status alone, `4xx` its class. */
function statusRange(text: string): { from: number; to: number } {
  const match = /^\s*([1-5])(xx|\d\d)\s*$/i.exec(text);
  if (!match) throw new InputError(`--status ${JSON.stringify(text)} is not a status (429) or a class (4xx)`);
  if (match[2]!.toLowerCase() === 'xx') return { from: Number(match[1]) * 100, to: Number(match[1]) * 100 + 99 };
  const status = Number(`${match[1]}${match[2]}`);
  return { from: status, to: status };
}

/** `--since`: an ISO 8601 time, or a duration back from now (`2h`). */
function sinceOf(text: string): Date {
  if (/^\s*\d+\s*[mhdw]\s*$/.test(text)) return new Date(Date.now() - parseDuration('--since', text));
  return parseInstant('--since', text);
}

/** `key log` and `key usage`: what the request log and the daily counts hold of one key. */
export function registerKeyActivityCommands(key: Command, ctx: CliContext): void {
  key
    .command('log')
    .description("a key's recent requests, newest first: time, method, path, status, error code, duration, request id, client network, cache")
    .requiredOption('--id <id>', 'key id')
    .option('--since <time>', 'only requests since this ISO 8601 time, or this long ago (2h, 3d)')
    .option('--status <code|class>', 'only answers with this status (429) or class (4xx)')
    .option('--limit <n>', `at most this many rows (1 to ${MAX_LOG_LIMIT})`, '100')
    .addOption(jsonOption())
    .action(async (options: Output & { id: string; since?: string; status?: string; limit: string }) => {
      const filter = {
        since: options.since === undefined ? undefined : sinceOf(options.since),
        status: options.status === undefined ? undefined : statusRange(options.status),
        limit: wholeNumber('--limit', options.limit, MAX_LOG_LIMIT),
      };
      const db = await ctx.database();
      await assertApiKeyExists(db, options.id);
      const rows = await readRequestLog(db, options.id, filter);
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
    .addOption(jsonOption())
    .action(async (options: Output & { id: string; days: string }) => {
      const days = wholeNumber('--days', options.days, ctx.config.KEY_USAGE_RETENTION_DAYS);
      const db = await ctx.database();
      await assertApiKeyExists(db, options.id);
      const usage = await readUsage(db, options.id, days);
      const lines = [
        'day         requests  2xx  3xx  4xx  5xx  429  not logged',
        ...usage.map((d) => `${d.day}  ${String(d.requests).padStart(8)}  ${d.status2xx}  ${d.status3xx}  ${d.status4xx}  ${d.status5xx}  ${d.rateLimited}  ${d.notLogged}`),
      ];
      ctx.print(options, usage, lines.join('\n'));
    });
}
