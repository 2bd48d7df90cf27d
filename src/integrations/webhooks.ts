/** A workspace's webhook endpoints and their deliveries, as its owners and admins manage them. */
import { InputError } from '../input-error.ts';
import { findDelivery, listDeliveries, type DeliverySummary } from '../webhooks/delivery-log-store.ts';
import {
  addEndpoint as addEndpointRow,
  enableEndpoint as enableEndpointRow,
  eventTypesOf,
  listEndpoints,
  recoverDeliveries,
  removeEndpoint as removeEndpointRow,
  rotateSecret,
  setEndpointUrl,
  setEventTypes,
  type EndpointSummary,
  type IssuedEndpoint,
  type RecoveryResult,
  type RotatedSecret,
} from '../webhooks/endpoint-store.ts';
import { DEFAULT_EVENT_TYPES, EVENT_TYPES, parseEventTypes, type EventType } from '../webhooks/event-types.ts';
import type { ManualResult } from '../webhooks/manual-result.ts';
import { testEventPayload } from '../webhooks/payload.ts';
import { parseTargetUrl } from '../webhooks/target-guard.ts';
import { recordTestEvent } from '../webhooks/test-event-store.ts';
import { authorize, labelsOf, type Actor } from './actor.ts';
import { recordAudit } from './audit-store.ts';
import { audited } from './audited.ts';
import type { IntegrationContext } from './context.ts';
import { overlapOf, pastTime } from './inputs.ts';
import { assertInWorkspace } from './target-store.ts';

export interface AddEndpointInput {
  url: string;
  /** The event types it receives; DEFAULT_EVENT_TYPES when not given. */
  events?: string | readonly string[] | undefined;
  participants?: boolean | undefined;
}

/** Registers an https endpoint on the actor's behalf; its signing secret is in the answer only now. */
export async function addEndpoint(ctx: IntegrationContext, actor: Actor, input: AddEndpointInput): Promise<IssuedEndpoint> {
  if (actor.memberEmail === null) throw new InputError('An endpoint is registered on behalf of an owner or admin: name them');
  const labels = labelsOf(actor);
  const events = input.events === undefined ? DEFAULT_EVENT_TYPES : parseEventTypes(labels.events, input.events);
  const memberEmail = actor.memberEmail;
  const box = await ctx.secretBox();
  // The actor is checked in the words of its way in (audited), before the store checks it again as it writes.
  return audited(ctx, actor, 'webhook.add', (issued) => issued.id, (tx) =>
    addEndpointRow(tx, box, {
      workspaceId: actor.workspaceId,
      memberEmail,
      url: input.url,
      urlLabel: labels.url,
      participants: input.participants ?? false,
      allowPrivateTargets: ctx.config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      events,
    }),
  );
}

/** The workspace's endpoints (no secrets), with their health. */
export async function listWebhookEndpoints(ctx: IntegrationContext, actor: Actor): Promise<EndpointSummary[]> {
  await authorize(ctx.db, actor);
  return listEndpoints(ctx.db, actor.workspaceId);
}

/** The event types an endpoint receives. */
export async function endpointEventTypes(ctx: IntegrationContext, actor: Actor, id: string): Promise<{ id: string; events: EventType[] }> {
  await authorize(ctx.db, actor);
  await assertInWorkspace(ctx.db, 'endpoint', id, actor.workspaceId);
  return eventTypesOf(ctx.db, id);
}

export interface UpdateEndpointInput {
  url?: string | undefined;
  events?: string | readonly string[] | undefined;
}

/** A new address, new event types, or both; what is not given stays. */
export async function updateEndpoint(ctx: IntegrationContext, actor: Actor, id: string, input: UpdateEndpointInput): Promise<{ id: string; url?: string; events?: EventType[] }> {
  const labels = labelsOf(actor);
  if (input.url === undefined && input.events === undefined) throw new InputError(`Give ${labels.url} or ${labels.events}`);
  const url = input.url === undefined ? undefined : parseTargetUrl(input.url, ctx.config.WEBHOOK_ALLOW_PRIVATE_TARGETS, labels.url);
  const events = input.events === undefined ? undefined : parseEventTypes(labels.events, input.events);
  return audited(ctx, actor, 'webhook.update', id, async (tx) => {
    await assertInWorkspace(tx, 'endpoint', id, actor.workspaceId);
    const changed: { id: string; url?: string; events?: EventType[] } = { id };
    if (url) changed.url = (await setEndpointUrl(tx, id, url)).url;
    if (events) changed.events = (await setEventTypes(tx, id, events)).events;
    return changed;
  });
}

/** Removes an endpoint: no new events, pending deliveries stop. */
export async function removeEndpoint(ctx: IntegrationContext, actor: Actor, id: string): Promise<{ id: string; state: 'removed' }> {
  return audited(ctx, actor, 'webhook.remove', id, async (tx) => {
    await assertInWorkspace(tx, 'endpoint', id, actor.workspaceId);
    return removeEndpointRow(tx, id);
  });
}

/** Turns a disabled endpoint back on; its pending deliveries resume. */
export async function enableEndpoint(ctx: IntegrationContext, actor: Actor, id: string): Promise<{ id: string; state: 'active'; resumed: number }> {
  return audited(ctx, actor, 'webhook.enable', id, async (tx) => {
    await assertInWorkspace(tx, 'endpoint', id, actor.workspaceId);
    return enableEndpointRow(tx, id);
  });
}

export type TestEventResult = Omit<ManualResult, 'deliveryId' | 'disabled'> & {
  event: string;
  type: EventType;
  /** The endpoint is disabled: the test was sent all the same, new events are not. */
  stillDisabled: boolean;
};

/** Sends one signed test event now (never retried) and answers with the receiver's answer. */
export async function sendTestEvent(ctx: IntegrationContext, actor: Actor, id: string, type = 'booking.created'): Promise<TestEventResult> {
  const label = labelsOf(actor).type;
  const [eventType] = parseEventTypes(label, type);
  if (!eventType || type.includes(',')) throw new InputError(`${label} takes one event type: ${EVENT_TYPES.join(', ')}`, { field: label });
  await authorize(ctx.db, actor);
  await assertInWorkspace(ctx.db, 'endpoint', id, actor.workspaceId);
  // The box first: without one nothing is recorded.
  await ctx.secretBox();
  const test = await recordTestEvent(ctx.db, id, eventType, (eventId, withParticipant) => testEventPayload(eventType, eventId, withParticipant, new Date()));
  await recordAudit(ctx.db, actor, 'webhook.test', id);
  const result = await ctx.sendNow('test', test.deliveryId);
  if (!result) throw new InputError(`Webhook endpoint ${id} was removed before the test event could be sent`);
  const { deliveryId: _delivery, disabled: _never, ...outcome } = result;
  return { event: test.eventId, type: eventType, ...outcome, stillDisabled: test.disabled };
}

/** An endpoint's delivery log: its newest 100 deliveries (or one event's), each with every attempt. */
export async function endpointDeliveries(ctx: IntegrationContext, actor: Actor, id: string, eventId?: string): Promise<DeliverySummary[]> {
  await authorize(ctx.db, actor);
  await assertInWorkspace(ctx.db, 'endpoint', id, actor.workspaceId);
  return listDeliveries(ctx.db, id, eventId);
}

/** One manual attempt of an event's delivery to an endpoint, now, outside its schedule. */
export async function resendDelivery(ctx: IntegrationContext, actor: Actor, endpointId: string, eventId: string): Promise<Omit<ManualResult, 'deliveryId'>> {
  await authorize(ctx.db, actor);
  await assertInWorkspace(ctx.db, 'endpoint', endpointId, actor.workspaceId);
  const deliveryId = await findDelivery(ctx.db, eventId, endpointId);
  const result = await ctx.sendNow('manual', deliveryId);
  if (!result) throw new InputError('Another attempt of this event to this endpoint is under way; try again in a moment');
  await recordAudit(ctx.db, actor, 'webhook.resend', eventId);
  const { deliveryId: _delivery, ...outcome } = result;
  return outcome;
}

/** Sends again, as new series of attempts, the failed deliveries of events recorded since a time. */
export async function recoverEndpoint(ctx: IntegrationContext, actor: Actor, id: string, since: string): Promise<RecoveryResult> {
  const from = pastTime(labelsOf(actor).since, since);
  return audited(ctx, actor, 'webhook.recover', id, async (tx) => {
    await assertInWorkspace(tx, 'endpoint', id, actor.workspaceId);
    return recoverDeliveries(tx, id, from);
  });
}

/** A new signing secret, in the answer only now; the old one signs too for `overlap` (24h unless given). */
export async function rotateSigningSecret(ctx: IntegrationContext, actor: Actor, id: string, overlap = '24h'): Promise<RotatedSecret> {
  const overlapMs = overlapOf(labelsOf(actor).overlap, overlap);
  const box = await ctx.secretBox();
  return audited(ctx, actor, 'webhook.rotate-secret', id, async (tx) => {
    await assertInWorkspace(tx, 'endpoint', id, actor.workspaceId);
    return rotateSecret(tx, box, id, overlapMs);
  });
}
