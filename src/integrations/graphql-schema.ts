import { performance } from 'node:perf_hooks';
import { mergeSchemas } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { ApiError } from '../errors.ts';
import { listIndexOf, rememberListIndex } from '../graphql/connections.ts';
import { PRICES } from '../graphql/work/estimate.ts';
import { isInputError } from '../input-error.ts';
import { isNotPermittedError } from '../workspaces/member-store.ts';
import type { Actor, Source } from './actor.ts';
import { auditEntries } from './audit.ts';
import type { IntegrationContext } from './context.ts';
import { createFeed, listFeeds, revokeFeed } from './feeds.ts';
import { INTEGRATIONS_SDL, INTEGRATION_LIST_BOUNDS } from './graphql-sdl.ts';
import { createPortalLink } from './portal.ts';
import { createKey, keyLog, keyUsage, listKeys, revokeKey, rotateKey, updateKey } from './keys.ts';
import {
  addEndpoint,
  enableEndpoint,
  endpointDeliveries,
  listWebhookEndpoints,
  recoverEndpoint,
  removeEndpoint,
  resendDelivery,
  rotateSigningSecret,
  sendTestEvent,
  updateEndpoint,
} from './webhooks.ts';

/** What a request on internal GraphQL brings to the area: the operations' context, the token's workspaces, the meter its budget settles by. */
export interface IntegrationsRequest {
  context: IntegrationContext;
  /** The workspaces the token may act in; null for every one. */
  workspaces: readonly string[] | null;
  /** The database time the request took, which its cost budget is settled at: an operation adds its time. */
  meter: { ms: number };
  /** The way in, as the audit records it: internal GraphQL unless said. */
  source?: Source;
  /**
   * The integrations page's session (rest/routes/portal.ts): it acts only as its own member, and
   * a read-only one changes nothing, whatever the page shows.
   */
  session?: { memberEmail: string; readOnly: boolean } | undefined;
}

type Context = { integrations?: IntegrationsRequest | undefined };
type Args = Record<string, unknown>;

/**
 * The way in's answer to what an operation refused: a member who may not act, FORBIDDEN; bad
 * input, BAD_USER_INPUT with the field it names (the message is the operation's own).
 */
function asGraphQLRefusal(error: unknown): unknown {
  if (isNotPermittedError(error)) return new ApiError('FORBIDDEN', error.message);
  if (isInputError(error)) return new ApiError('BAD_USER_INPUT', error.message, { field: error.field });
  return error;
}

/** The actor a field names, refused when the token may not act in that workspace. */
function actorOf(request: IntegrationsRequest, args: Args): Actor {
  const workspaceId = String(args.workspaceId);
  if (request.workspaces && !request.workspaces.includes(workspaceId)) {
    throw new ApiError('FORBIDDEN', `This token may not act in workspace ${JSON.stringify(workspaceId)}`);
  }
  const memberEmail = String(args.member);
  if (request.session && memberEmail.toLowerCase() !== request.session.memberEmail.toLowerCase()) {
    throw new ApiError('FORBIDDEN', "This session acts only as its own member: give the member of the session's answer");
  }
  return { workspaceId, memberEmail, source: request.source ?? 'graphql' };
}

function requestOf(context: Context): IntegrationsRequest {
  // Served only where the internal listener puts it in the context (the grant checked before).
  if (!context.integrations) throw new ApiError('INTEGRATIONS_NOT_GRANTED');
  return context.integrations;
}

async function run<T>(request: IntegrationsRequest, operation: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await operation();
  } catch (error) {
    throw asGraphQLRefusal(error);
  } finally {
    request.meter.ms += performance.now() - started;
  }
}

/** A field of `Integrations`: its parent is the actor `Query.integrations` named. */
type Scoped = { actor: Actor; request: IntegrationsRequest };

const optional = <T>(value: unknown): T | undefined => (value === null || value === undefined ? undefined : (value as T));

function mutation(operation: (ctx: IntegrationContext, actor: Actor, args: Args) => Promise<unknown>) {
  return (_: unknown, args: Args, context: Context) => {
    const request = requestOf(context);
    if (request.session?.readOnly) throw new ApiError('READ_ONLY_SESSION');
    return run(request, async () => operation(request.context, actorOf(request, args), args));
  };
}

function read(operation: (ctx: IntegrationContext, actor: Actor, args: Args) => Promise<unknown>) {
  return (parent: Scoped, args: Args) => run(parent.request, async () => operation(parent.request.context, parent.actor, args));
}

const resolvers = {
  Query: {
    integrations: (_: unknown, args: Args, context: Context): Scoped => {
      const request = requestOf(context);
      return { actor: actorOf(request, args), request };
    },
  },
  Integrations: {
    apiKeys: read((ctx, actor) => listKeys(ctx, actor)),
    apiKeyRequests: read((ctx, actor, args) =>
      keyLog(ctx, actor, String(args.id), { since: optional(args.since), status: optional(args.status), limit: optional(args.limit) }),
    ),
    apiKeyUsage: read((ctx, actor, args) => keyUsage(ctx, actor, String(args.id), optional<number>(args.days))),
    webhookEndpoints: read((ctx, actor) => listWebhookEndpoints(ctx, actor)),
    webhookDeliveries: read((ctx, actor, args) => endpointDeliveries(ctx, actor, String(args.endpointId), optional(args.eventId))),
    calendarFeeds: read((ctx, actor) => listFeeds(ctx, actor)),
    audit: read((ctx, actor, args) => auditEntries(ctx, actor, optional(args.since))),
  },
  Mutation: {
    createApiKey: mutation((ctx, actor, { input }) => {
      const given = input as Args;
      return createKey(ctx, actor, {
        name: optional(given.name),
        scopes: given.scopes as string[],
        expiresIn: optional(given.expiresIn),
        expiresAt: optional(given.expiresAt),
        allowedIps: optional(given.allowedIps),
      });
    }),
    updateApiKey: mutation((ctx, actor, { id, input }) => {
      const given = input as Args;
      return updateKey(ctx, actor, String(id), {
        name: optional(given.name),
        scopes: optional(given.scopes),
        expiresIn: optional(given.expiresIn),
        expiresAt: optional(given.expiresAt),
        neverExpires: optional(given.neverExpires),
        // An explicit null removes the list; absent leaves it.
        allowedIps: 'allowedIps' in given ? (given.allowedIps as string[] | null) : undefined,
      });
    }),
    rotateApiKey: mutation((ctx, actor, { id }) => rotateKey(ctx, actor, String(id))),
    revokeApiKey: mutation((ctx, actor, { id }) => revokeKey(ctx, actor, String(id))),
    addWebhookEndpoint: mutation((ctx, actor, { input }) => {
      const given = input as Args;
      return addEndpoint(ctx, actor, { url: String(given.url), events: optional(given.events), participants: optional(given.participants) });
    }),
    updateWebhookEndpoint: mutation((ctx, actor, { id, input }) => {
      const given = input as Args;
      return updateEndpoint(ctx, actor, String(id), { url: optional(given.url), events: optional(given.events) });
    }),
    removeWebhookEndpoint: mutation((ctx, actor, { id }) => removeEndpoint(ctx, actor, String(id))),
    enableWebhookEndpoint: mutation((ctx, actor, { id }) => enableEndpoint(ctx, actor, String(id))),
    sendWebhookTestEvent: mutation((ctx, actor, { id, type }) => sendTestEvent(ctx, actor, String(id), optional(type))),
    resendWebhookDelivery: mutation((ctx, actor, { endpointId, eventId }) => resendDelivery(ctx, actor, String(endpointId), String(eventId))),
    recoverWebhookDeliveries: mutation((ctx, actor, { id, since }) => recoverEndpoint(ctx, actor, String(id), String(since))),
    rotateWebhookSecret: mutation((ctx, actor, { id, overlap }) => rotateSigningSecret(ctx, actor, String(id), optional(overlap))),
    createCalendarFeed: mutation((ctx, actor, { name }) => createFeed(ctx, actor, { name: optional(name) })),
    revokeCalendarFeed: mutation((ctx, actor, { id }) => revokeFeed(ctx, actor, String(id))),
    createPortalSession: mutation((ctx, actor, { readOnly, ttl }) => createPortalLink(ctx, actor, { readOnly: optional(readOnly), ttl: optional(ttl) })),
  },
};

const served = new WeakMap<GraphQLSchema, GraphQLSchema>();

/** Internal GraphQL's schema with the integrations area: what the internal listener serves and schema/internal.graphql holds. */
export function withIntegrations(internal: GraphQLSchema): GraphQLSchema {
  let schema = served.get(internal);
  if (!schema) {
    schema = mergeSchemas({ schemas: [internal], typeDefs: INTEGRATIONS_SDL, resolvers });
    rememberListIndex(schema, listIndexOf(internal));
    served.set(internal, schema);
  }
  return schema;
}

/** The root fields of the area: what the integrations grant opens. */
export const INTEGRATION_ROOT_FIELDS: ReadonlySet<string> = new Set(['Query.integrations', ...Object.keys(resolvers.Mutation).map((name) => `Mutation.${name}`)]);

/** The root fields the integrations page's endpoint serves: the area, but no new link (a session makes none). */
export const PAGE_ROOT_FIELDS: ReadonlySet<string> = new Set([...INTEGRATION_ROOT_FIELDS].filter((field) => field !== 'Mutation.createPortalSession'));

/** The statements one operation of the area sends, about: the actor's check, the target's, its own, the audit's. */
const STATEMENTS_PER_OPERATION = 5;

/**
 * The work estimate of each field of the area (none reads a resource of the registry): its
 * statements, and a row returned per row of its list's bound. Reserved from the token's budget
 * before anything runs and settled, as every request is, at the time the request took.
 */
export const INTEGRATION_FIELD_POINTS: ReadonlyMap<string, number> = new Map(
  [...Object.keys(resolvers.Mutation).map((name) => `Mutation.${name}`), ...Object.keys(resolvers.Integrations).map((name) => `Integrations.${name}`)].map((field) => [
    field,
    STATEMENTS_PER_OPERATION * PRICES.statement + (INTEGRATION_LIST_BOUNDS.get(field) ?? 0) * PRICES.rowReturned,
  ]),
);
