import type { Command } from 'commander';
import { InputError } from '../../input-error.ts';
import { actorByTarget, type Actor } from '../../integrations/actor.ts';
import type { IntegrationContext } from '../../integrations/context.ts';
import {
  addEndpoint,
  enableEndpoint,
  endpointDeliveries,
  endpointEventTypes,
  listWebhookEndpoints,
  recoverEndpoint,
  removeEndpoint,
  resendDelivery,
  rotateSigningSecret,
  sendTestEvent,
  updateEndpoint,
} from '../../integrations/webhooks.ts';
import { DEFAULT_EVENT_TYPES, EVENT_TYPES } from '../../webhooks/event-types.ts';
import type { ManualResult } from '../../webhooks/manual-result.ts';
import { resealSecrets } from '../../webhooks/reseal-store.ts';
import { jsonOption, memberOption, type CliContext, type Output } from '../context.ts';

/** The operations' context and the actor of a command that names an endpoint. */
async function onEndpoint(ctx: CliContext, id: string, member: string | undefined, labels?: Actor['labels']): Promise<[IntegrationContext, Actor]> {
  const integrations = await ctx.integrations();
  const actor = await actorByTarget(integrations.db, 'endpoint', id, member ?? null, 'cli');
  return [integrations, labels ? { ...actor, labels } : actor];
}

export function registerWebhookCommands(program: Command, ctx: CliContext): void {
  const webhook = program.command('webhook').description('booking webhook endpoints (booking.created, booking.updated) and their deliveries');
  webhook
    .command('add')
    .description('register an https endpoint on behalf of an owner or admin (the secret is shown only now)')
    .requiredOption('--workspace <id>', 'workspace id')
    .requiredOption('--member <email>', 'e-mail of the owner or admin registering it')
    .requiredOption('--url <https url>', 'where events are POSTed (https:// only)')
    .option('--participants', 'include participant data (name, e-mail) in the payload')
    .option('--events <types>', `the event types it receives, comma-separated: ${EVENT_TYPES.join(', ')}`, DEFAULT_EVENT_TYPES.join(','))
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; member: string; url: string; participants?: boolean; events: string }) => {
      const issued = await addEndpoint(
        await ctx.integrations(),
        { workspaceId: options.workspace, memberEmail: options.member, source: 'cli' },
        { url: options.url, participants: options.participants ?? false, events: options.events },
      );
      ctx.print(options, issued, `Webhook endpoint ${issued.id}\nSigning secret: ${issued.secret}\nIt is shown only now.`);
    });
  webhook
    .command('list')
    .description('list the endpoints of a workspace (no secrets)')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string; member?: string }) => {
      const endpoints = await listWebhookEndpoints(await ctx.integrations(), { workspaceId: options.workspace, memberEmail: options.member ?? null, source: 'cli' });
      const lines = endpoints.map(
        (e) =>
          `${e.id}  ${e.state.padEnd(8)}  ${e.participants ? 'participants' : 'no participants'}  ${e.events.join(',')}  ${e.url}` +
          `${e.disabledAt ? `  disabled since ${e.disabledAt} (${e.disabledReason === 'gone' ? 'gone: its receiver answered 410' : 'failing'})` : ''}` +
          `${e.health?.state === 'healthy' ? '  healthy' : ''}` +
          `${e.health?.state === 'failing' ? `  failing: ${e.health.consecutiveFailures} failed attempts since ${e.health.failingSince}, the last ${e.health.lastFailure}` : ''}` +
          `${e.previousSecretUntil ? `  previous secret until ${e.previousSecretUntil}` : ''}`,
      );
      ctx.print(options, endpoints, lines.join('\n') || 'No webhook endpoints');
    });
  webhook
    .command('remove')
    .description('remove an endpoint: no new events, pending deliveries stop')
    .option('--endpoint <id>', 'endpoint id')
    .option('--id <id>', 'the same as --endpoint (the name this command took before; kept for scripts)')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint?: string; id?: string; member?: string }) => {
      if ((options.endpoint === undefined) === (options.id === undefined)) throw new InputError('Give the endpoint to remove as --endpoint <id>');
      const id = (options.endpoint ?? options.id)!;
      const result = await removeEndpoint(...(await onEndpoint(ctx, id, options.member)), id);
      ctx.print(options, result, `Webhook endpoint ${result.id} removed`);
    });
  webhook
    .command('deliveries')
    .description("an endpoint's delivery log: newest 100 deliveries (or one event's) with every attempt")
    .requiredOption('--endpoint <id>', 'endpoint id')
    .option('--event <id>', 'only this event')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; event?: string; member?: string }) => {
      const deliveries = await endpointDeliveries(...(await onEndpoint(ctx, options.endpoint, options.member)), options.endpoint, options.event);
      const lines = deliveries.flatMap((d) => [
        `${d.eventId}  ${d.eventType}${d.test ? ' (test)' : ''}  ${d.state}  ${d.attempts} attempt(s)${d.series > 1 ? ` in series ${d.series}` : ''}${d.nextAttemptAt ? `  next ${d.nextAttemptAt}` : ''}` +
          `${d.bodyErasedAt ? `  body erased ${d.bodyErasedAt}` : ''}`,
        ...d.log.map(
          (a) => `  ${a.manual ? 'manual' : `#${a.number}`}${a.series > 1 ? ` (series ${a.series})` : ''}  ${a.startedAt}  ${a.durationMs} ms  ${a.httpStatus ?? '-'}  ${a.error ?? 'ok'}`,
        ),
      ]);
      ctx.print(options, deliveries, lines.join('\n') || 'No deliveries');
    });
  webhook
    .command('redeliver')
    .description('make one manual attempt now (outside the 8 scheduled ones) and print its outcome; exits 1 when it failed')
    .requiredOption('--event <id>', 'event id (the webhook-id)')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { event: string; endpoint: string; member?: string }) => {
      const outcome = await resendDelivery(...(await onEndpoint(ctx, options.endpoint, options.member)), options.endpoint, options.event);
      ctx.print(options, outcome, describeOutcome(outcome));
      if (!outcome.ok) ctx.failed();
    });
  webhook
    .command('events')
    .description('show, or with --set change, the event types an endpoint receives')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .option('--set <types>', `comma-separated: ${EVENT_TYPES.join(', ')}`)
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; set?: string; member?: string }) => {
      const [integrations, actor] = await onEndpoint(ctx, options.endpoint, options.member, { events: '--set' });
      const result =
        options.set === undefined
          ? await endpointEventTypes(integrations, actor, options.endpoint)
          : { id: options.endpoint, events: (await updateEndpoint(integrations, actor, options.endpoint, { events: options.set })).events! };
      ctx.print(options, result, `Webhook endpoint ${result.id} receives ${result.events.join(', ')}`);
    });
  webhook
    .command('test')
    .description('send one signed test event now ("test": true, an example booking bkg_test_…), never retried, and print the answer; exits 1 when it failed')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .option('--type <type>', `the event type: ${EVENT_TYPES.join(', ')}`, 'booking.created')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; type: string; member?: string }) => {
      const { stillDisabled, ...result } = await sendTestEvent(...(await onEndpoint(ctx, options.endpoint, options.member)), options.endpoint, options.type);
      ctx.print(
        options,
        result,
        `Test ${result.type} event ${result.event}: ${describeOutcome({ ...result, disabled: false })}${stillDisabled ? `\nThe endpoint is still disabled (webhook enable --endpoint ${options.endpoint})` : ''}`,
      );
      if (!result.ok) ctx.failed();
    });
  webhook
    .command('rotate-secret')
    .description('issue a new signing secret (shown only now); during the overlap attempts carry the signatures of both secrets')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .option('--overlap <duration>', 'how long the old secret still signs too: e.g. 24h, 90m, 30s, 2d; 0 for none (at most 7d)', '24h')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; overlap: string; member?: string }) => {
      const rotated = await rotateSigningSecret(...(await onEndpoint(ctx, options.endpoint, options.member)), options.endpoint, options.overlap);
      ctx.print(
        options,
        rotated,
        `New signing secret of ${rotated.id}: ${rotated.secret}\nIt is shown only now. ` +
          (rotated.previousSecretUntil ? `Until ${rotated.previousSecretUntil} attempts are signed with the old secret too.` : 'The old secret no longer signs.'),
      );
    });
  webhook
    .command('reseal')
    .description('seal every endpoint secret again under the newest key of WEBHOOK_SECRET_KEY (after adding a key in front)')
    .addOption(jsonOption())
    .action(async (options: Output) => {
      const result = await resealSecrets(await ctx.database(), await ctx.secretBox());
      ctx.print(options, result, `Resealed ${result.resealed} secret(s) under the newest key; ${result.current} already were`);
    });
  webhook
    .command('enable')
    .description('turn a disabled endpoint back on: new events go to it again and pending retries resume')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; member?: string }) => {
      const result = await enableEndpoint(...(await onEndpoint(ctx, options.endpoint, options.member)), options.endpoint);
      ctx.print(options, result, `Webhook endpoint ${result.id} enabled; ${result.resumed} pending delivery(ies) resumed`);
    });
  webhook
    .command('recover')
    .description('send again, as new attempt series with their original webhook-id, the failed deliveries of events since a time')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .requiredOption('--since <ISO time>', 'events recorded at or after this time, e.g. 2026-11-20T08:00:00Z')
    .addOption(memberOption())
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; since: string; member?: string }) => {
      const result = await recoverEndpoint(...(await onEndpoint(ctx, options.endpoint, options.member)), options.endpoint, options.since);
      ctx.print(options, result, `${result.recovered} failed delivery(ies) of events since ${result.since} queued again, in creation order`);
    });
}

/**
 * An attempt made by hand, for the operator who made it: the status (or failure), when and how
 * long, and the start of the receiver's answer, quoted so that no control character of it
 * reaches the terminal.
 */
function describeOutcome(result: Omit<ManualResult, 'deliveryId'>): string {
  const status = result.ok ? `Delivered (HTTP ${result.httpStatus})` : `Failed: ${result.error}${result.httpStatus ? ` (HTTP ${result.httpStatus})` : ''}`;
  const when = result.startedAt ? ` at ${result.startedAt}` : '';
  const answer = result.answerStart ? `; the receiver answered ${JSON.stringify(result.answerStart)}` : '';
  const gone = result.disabled ? `\nThe receiver answered 410 Gone: the endpoint is disabled (webhook enable to turn it back on)` : '';
  const hint = result.hint ? `\n${result.hint}` : '';
  return `${status}${when} in ${result.durationMs} ms${answer}${gone}${hint}`;
}
