/** A workspace's API keys, as its owners and admins manage them: each operation once, for every way in. */
import {
  createApiKey,
  keyName,
  listApiKeys,
  revokeApiKey,
  rotateApiKeyIn,
  updateApiKey,
  type ApiKeyChanges,
  type ApiKeyState,
  type ApiKeySummary,
  type IssuedApiKey,
  type UpdatedApiKey,
} from '../auth/api-key-store.ts';
import { readRequestLog, readUsage, type DailyUsage, type LoggedRequest } from '../auth/key-activity-store.ts';
import { expiryOf, parseAllowList } from '../auth/key-policy.ts';
import { InputError } from '../input-error.ts';
import { authorize, labelsOf, type Actor } from './actor.ts';
import { audited } from './audited.ts';
import type { IntegrationContext } from './context.ts';
import { sinceOf, statusRange, wholeNumber } from './inputs.ts';
import { assertInWorkspace } from './target-store.ts';

export interface KeyPolicyInput {
  /** A lifetime from now (`30d`), or an ISO 8601 time: one of them at most. */
  expiresIn?: string | undefined;
  expiresAt?: string | undefined;
  /** Addresses and CIDR ranges; null: any address. */
  allowedIps?: string | readonly string[] | null | undefined;
}

export interface CreateKeyInput extends KeyPolicyInput {
  name?: string | undefined;
  scopes: string | readonly string[];
}

const allowListOf = (actor: Actor, given: KeyPolicyInput['allowedIps']) => (given === undefined ? undefined : given === null ? null : parseAllowList(given, labelsOf(actor)));

/** A new key of the actor's workspace, on the actor's behalf; the key is in the answer only now. */
export async function createKey(ctx: IntegrationContext, actor: Actor, input: CreateKeyInput): Promise<IssuedApiKey> {
  if (actor.memberEmail === null) throw new InputError('A key is created on behalf of an owner or admin: name them');
  const labels = labelsOf(actor);
  // Every input is checked before the database is touched: bad input writes nothing.
  const expiresAt = expiryOf(input, Date.now(), labels);
  const allowedIps = allowListOf(actor, input.allowedIps) ?? null;
  keyName(input.name, labels.name);
  const memberEmail = actor.memberEmail;
  // The actor is checked in the words of its way in (audited), before the store checks it again as it writes.
  return audited(ctx, actor, 'key.create', (issued) => issued.id, (tx) =>
    createApiKey(tx, { workspaceId: actor.workspaceId, memberEmail, scopes: input.scopes, name: input.name, expiresAt, allowedIps }),
  );
}

export interface UpdateKeyInput extends KeyPolicyInput {
  name?: string | undefined;
  scopes?: string | readonly string[] | undefined;
  /** The key no longer expires. */
  neverExpires?: boolean | undefined;
}

/** Changes a key's name, scopes, expiry or allow list; every instance applies it within a second. */
export async function updateKey(ctx: IntegrationContext, actor: Actor, id: string, input: UpdateKeyInput): Promise<UpdatedApiKey> {
  const labels = labelsOf(actor);
  const given = [input.name, input.scopes, input.expiresIn, input.expiresAt, input.neverExpires || undefined, input.allowedIps];
  if (given.every((value) => value === undefined)) {
    throw new InputError(`Give ${labels.allowedIps} <list> or ${labels.anyAddress}, or ${[labels.name, labels.scopes, labels.expiresIn, labels.expiresAt].join(', ')} or ${labels.neverExpires}`);
  }
  if (input.neverExpires && (input.expiresIn !== undefined || input.expiresAt !== undefined)) {
    throw new InputError(`Give ${labels.neverExpires} or an expiry, not both`, { field: labels.neverExpires });
  }
  const changes: ApiKeyChanges = {
    name: input.name === undefined ? undefined : keyName(input.name, labels.name),
    scopes: input.scopes,
    expiresAt: input.neverExpires ? null : input.expiresIn !== undefined || input.expiresAt !== undefined ? expiryOf(input, Date.now(), labels) : undefined,
    allowedIps: allowListOf(actor, input.allowedIps),
  };
  return audited(ctx, actor, 'key.update', id, async (tx) => {
    await assertInWorkspace(tx, 'key', id, actor.workspaceId);
    return updateApiKey(tx, id, changes);
  });
}

/** A new key in place of one, with its name, scopes, allow list and lifetime; the old one is refused at once. */
export async function rotateKey(ctx: IntegrationContext, actor: Actor, id: string): Promise<{ id: string; key: string; expiresAt: string | null }> {
  return audited(ctx, actor, 'key.rotate', id, async (tx) => {
    await assertInWorkspace(tx, 'key', id, actor.workspaceId);
    return rotateApiKeyIn(tx, id);
  });
}

/** Revokes a key: every instance refuses it within a second (docs/contract-rules.md, auth.revocation). */
export async function revokeKey(ctx: IntegrationContext, actor: Actor, id: string): Promise<{ id: string; state: ApiKeyState }> {
  return audited(ctx, actor, 'key.revoke', id, async (tx) => {
    await assertInWorkspace(tx, 'key', id, actor.workspaceId);
    return revokeApiKey(tx, id);
  });
}

/** The workspace's keys, no secrets: state, expiry, allow list, last use. */
export async function listKeys(ctx: IntegrationContext, actor: Actor): Promise<ApiKeySummary[]> {
  await authorize(ctx.db, actor);
  return listApiKeys(ctx.db, actor.workspaceId);
}

/** The most rows one read of a key's log returns. */
export const MAX_LOG_LIMIT = 1000;

export interface KeyLogInput {
  /** An ISO 8601 time, or a duration back from now (`2h`). */
  since?: string | undefined;
  /** A status (`429`) or a class (`4xx`). */
  status?: string | undefined;
  limit?: string | number | undefined;
}

/** A key's recent requests, newest first. */
export async function keyLog(ctx: IntegrationContext, actor: Actor, id: string, input: KeyLogInput): Promise<LoggedRequest[]> {
  const labels = labelsOf(actor);
  const filter = {
    since: input.since === undefined ? undefined : sinceOf(labels.since, input.since),
    status: input.status === undefined ? undefined : statusRange(labels.status, input.status),
    limit: wholeNumber(labels.limit, input.limit ?? 100, MAX_LOG_LIMIT),
  };
  await authorize(ctx.db, actor);
  await assertInWorkspace(ctx.db, 'key', id, actor.workspaceId);
  return readRequestLog(ctx.db, id, filter);
}

/** A key's requests per day (UTC, newest first), `days` back, today included. */
export async function keyUsage(ctx: IntegrationContext, actor: Actor, id: string, days: string | number = 7): Promise<DailyUsage[]> {
  const count = wholeNumber(labelsOf(actor).days, days, ctx.config.KEY_USAGE_RETENTION_DAYS);
  await authorize(ctx.db, actor);
  await assertInWorkspace(ctx.db, 'key', id, actor.workspaceId);
  return readUsage(ctx.db, id, count);
}
