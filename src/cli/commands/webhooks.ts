import type { Command } from 'commander';
import { createLogger } from '../../logger.ts';
import { InputError } from '../../input-error.ts';
import { createDeliverer } from '../../webhooks/deliverer.ts';
import {
  addEndpoint,
  enableEndpoint,
  eventTypesOf,
  listEndpoints,
  recoverDeliveries,
  removeEndpoint,
  rotateSecret,
  setEventTypes,
} from '../../webhooks/endpoint-store.ts';
import { findDelivery, listDeliveries } from '../../webhooks/delivery-log-store.ts';
import { DEFAULT_EVENT_TYPES, EVENT_TYPES, parseEventTypes } from '../../webhooks/event-types.ts';
import { testEventPayload } from '../../webhooks/payload.ts';
import type { ManualResult } from '../../webhooks/manual-result.ts';
import { recordTestEvent } from '../../webhooks/test-event-store.ts';
import { resealSecrets } from '../../webhooks/reseal-store.ts';
import { assertWorkspaceExists } from '../../workspaces/workspace-store.ts';
import { jsonOption, type CliContext, type Output } from '../context.ts';

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
      const events = parseEventTypes('--events', options.events);
      const box = await ctx.secretBox();
      const issued = await addEndpoint(await ctx.database(), box, {
        workspaceId: options.workspace,
        memberEmail: options.member,
        url: options.url,
        participants: options.participants ?? false,
        allowPrivateTargets: ctx.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
        events,
      });
      ctx.print(options, issued, `Webhook endpoint ${issued.id}\nSigning secret: ${issued.secret}\nIt is shown only now.`);
    });
  webhook
    .command('list')
    .description('list the endpoints of a workspace (no secrets)')
    .requiredOption('--workspace <id>', 'workspace id')
    .addOption(jsonOption())
    .action(async (options: Output & { workspace: string }) => {
      const db = await ctx.database();
      await assertWorkspaceExists(db, options.workspace);
      const endpoints = await listEndpoints(db, options.workspace);
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
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint?: string; id?: string }) => {
      if ((options.endpoint === undefined) === (options.id === undefined)) throw new InputError('Give the endpoint to remove as --endpoint <id>');
      const result = await removeEndpoint(await ctx.database(), (options.endpoint ?? options.id)!);
      ctx.print(options, result, `Webhook endpoint ${result.id} removed`);
    });
  webhook
    .command('deliveries')
    .description("an endpoint's delivery log: newest 100 deliveries (or one event's) with every attempt")
    .requiredOption('--endpoint <id>', 'endpoint id')
    .option('--event <id>', 'only this event')
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; event?: string }) => {
      const deliveries = await listDeliveries(await ctx.database(), options.endpoint, options.event);
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
    .description('make one manual attempt now (outside the 8 scheduled ones) and print its outcome')
    .requiredOption('--event <id>', 'event id (the webhook-id)')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .addOption(jsonOption())
    .action(async (options: Output & { event: string; endpoint: string }) => {
      const db = await ctx.database();
      const deliveryId = await findDelivery(db, options.event, options.endpoint);
      const { deliverer, sender } = createDeliverer({
        db,
        config: ctx.config,
        logger: createLogger('silent'),
        box: await ctx.secretBox(),
        trustedCertificates: ctx.io.trustedCertificates,
      });
      try {
        const result = await deliverer.runManual(deliveryId);
        if (!result) throw new InputError('Another attempt of this event to this endpoint is under way; try again in a moment');
        const { deliveryId: _ignored, ...outcome } = result;
        ctx.print(options, outcome, describeOutcome(result));
      } finally {
        sender.close();
      }
    });
  webhook
    .command('events')
    .description('show, or with --set change, the event types an endpoint receives')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .option('--set <types>', `comma-separated: ${EVENT_TYPES.join(', ')}`)
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; set?: string }) => {
      const db = await ctx.database();
      const result = options.set === undefined ? await eventTypesOf(db, options.endpoint) : await setEventTypes(db, options.endpoint, parseEventTypes('--set', options.set));
      ctx.print(options, result, `Webhook endpoint ${result.id} receives ${result.events.join(', ')}`);
    });
  webhook
    .command('test')
    .description('send one signed test event now ("test": true, an example booking bkg_test_…), never retried, and print the answer')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .option('--type <type>', `the event type: ${EVENT_TYPES.join(', ')}`, 'booking.created')
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; type: string }) => {
      const [type] = parseEventTypes('--type', options.type);
      if (!type || options.type.includes(',')) throw new InputError(`--type takes one event type: ${EVENT_TYPES.join(', ')}`);
      const db = await ctx.database();
      const box = await ctx.secretBox();
      const test = await recordTestEvent(db, options.endpoint, type, (eventId, withParticipant) => testEventPayload(type, eventId, withParticipant, new Date()));
      const { deliverer, sender } = createDeliverer({ db, config: ctx.config, logger: createLogger('silent'), box, trustedCertificates: ctx.io.trustedCertificates });
      try {
        const result = await deliverer.runTest(test.deliveryId);
        if (!result) throw new InputError(`Webhook endpoint ${options.endpoint} was removed before the test event could be sent`);
        const { deliveryId: _ignored, disabled: _never, ...outcome } = result;
        ctx.print(
          options,
          { event: test.eventId, type, ...outcome },
          `Test ${type} event ${test.eventId}: ${describeOutcome(result)}${test.disabled ? `\nThe endpoint is still disabled (webhook enable --endpoint ${options.endpoint})` : ''}`,
        );
      } finally {
        sender.close();
      }
    });
  webhook
    .command('rotate-secret')
    .description('issue a new signing secret (shown only now); during the overlap attempts carry the signatures of both secrets')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .option('--overlap <duration>', 'how long the old secret still signs too: e.g. 24h, 90m, 30s, 2d; 0 for none (at most 7d)', '24h')
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; overlap: string }) => {
      const overlapMs = parseDuration('--overlap', options.overlap, 7 * 86_400_000);
      const rotated = await rotateSecret(await ctx.database(), await ctx.secretBox(), options.endpoint, overlapMs);
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
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string }) => {
      const result = await enableEndpoint(await ctx.database(), options.endpoint);
      ctx.print(options, result, `Webhook endpoint ${result.id} enabled; ${result.resumed} pending delivery(ies) resumed`);
    });
  webhook
    .command('recover')
    .description('send again, as new attempt series with their original webhook-id, the failed deliveries of events since a time')
    .requiredOption('--endpoint <id>', 'endpoint id')
    .requiredOption('--since <ISO time>', 'events recorded at or after this time, e.g. 2026-11-20T08:00:00Z')
    .addOption(jsonOption())
    .action(async (options: Output & { endpoint: string; since: string }) => {
      const result = await recoverDeliveries(await ctx.database(), options.endpoint, parseIsoTime('--since', options.since));
      ctx.print(options, result, `${result.recovered} failed delivery(ies) of events since ${result.since} queued again, in creation order`);
    });
}

/**
 * An attempt made by hand, for the operator who made it: the status (or failure), when and how
 * long, and the start of the receiver's answer, quoted so that no control character of it
 * reaches the terminal.
 */
function describeOutcome(result: ManualResult): string {
  const status = result.ok ? `Delivered (HTTP ${result.httpStatus})` : `Failed: ${result.error}${result.httpStatus ? ` (HTTP ${result.httpStatus})` : ''}`;
  const when = result.startedAt ? ` at ${result.startedAt}` : '';
  const answer = result.answerStart ? `; the receiver answered ${JSON.stringify(result.answerStart)}` : '';
  const gone = result.disabled ? `\nThe receiver answered 410 Gone: the endpoint is disabled (webhook enable to turn it back on)` : '';
  return `${status}${when} in ${result.durationMs} ms${answer}${gone}`;
}

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/;

/** An ISO 8601 date or date-time with its offset (a bare date is midnight UTC); no day past its month's end. */
function parseIsoTime(label: string, text: string): Date {
  const value = text.trim();
  const match = ISO_TIME.exec(value);
  const [year, month, day] = match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [0, 0, 0];
  const realDay = match !== null && month >= 1 && month <= 12 && day >= 1 && new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
  const parsed = realDay ? new Date(value) : null;
  if (!parsed || Number.isNaN(parsed.getTime())) {
    throw new InputError(`${label} ${JSON.stringify(text)} is not an ISO 8601 time with its offset, e.g. 2026-11-20T08:00:00Z`);
  }
  if (parsed.getTime() > Date.now()) throw new InputError(`${label} ${parsed.toISOString()} is in the future`);
  return parsed;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `0`, or a whole number with a unit: 500ms, 30s, 90m, 24h, 2d. */
function parseDuration(label: string, text: string, maxMs: number): number {
  const match = /^\s*(\d{1,9})\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match || (match[2] === undefined && match[1] !== '0')) {
    throw new InputError(`${label} ${JSON.stringify(text)} is not a duration such as 24h, 90m, 30s or 2d (or 0)`);
  }
  const ms = Number(match[1]) * UNIT_MS[match[2] ?? 'ms']!;
  if (ms > maxMs) throw new InputError(`${label} must be at most ${maxMs / 86_400_000}d`);
  return ms;
}
