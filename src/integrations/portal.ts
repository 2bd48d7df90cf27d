/** The integrations page's links and sessions (docs/integrations-area.md), as the CLI, internal GraphQL and the page reach them. */
import { parseDuration } from '../auth/key-policy.ts';
import { generatePortalSecret, isWellFormedPortalSecret, PORTAL_LINK_PREFIX, PORTAL_SESSION_PREFIX, sha256 } from '../auth/secret-format.ts';
import { transactionRetryingDeadlocks } from '../db/deadlock-retry.ts';
import { InputError } from '../input-error.ts';
import { labelsOf, type Actor } from './actor.ts';
import { recordAudit } from './audit-store.ts';
import { audited } from './audited.ts';
import type { IntegrationContext } from './context.ts';
import { findPortalSession, insertPortalLink, openPortalLink, revokePortalSessions, type PortalLinkRow, type PortalSession } from './portal-store.ts';

/** A link must be opened within this time of its making; the session it opens lasts its own time. */
export const PORTAL_LINK_LIFE_SECONDS = 10 * 60;
/** A session's life: an hour unless given, at most a day. */
export const DEFAULT_PORTAL_TTL = '1h';
const LONGEST_TTL_MS = 24 * 3_600_000;

export interface PortalLink {
  /** `<public URL>/integrations/#<link secret>`: the secret in the fragment, which no server, proxy or log sees. */
  url: string;
  /** When the link stops opening (10 minutes from now); the session's own end is in the session's answer. */
  expiresAt: string;
}

/**
 * A single-use link to the integrations page for the actor (an owner or admin of the workspace),
 * opening a session of `ttl` (1h by default, at most 24h), read-only when asked. Audited as
 * `portal.link`; only the hash of its secret is kept.
 */
export async function createPortalLink(ctx: IntegrationContext, actor: Actor, input: { readOnly?: boolean | undefined; ttl?: string | undefined }): Promise<PortalLink> {
  const labels = labelsOf(actor);
  if (actor.memberEmail === null) throw new InputError('A link to the integrations page is made for an owner or admin: name them', { field: 'member' });
  const memberEmail = actor.memberEmail;
  const ttlMs = parseDuration(labels.ttl, input.ttl ?? DEFAULT_PORTAL_TTL);
  if (ttlMs > LONGEST_TTL_MS) throw new InputError(`${labels.ttl} ${JSON.stringify(input.ttl)} is longer than 24h, the longest a session lasts`, { field: labels.ttl });
  const secret = generatePortalSecret(PORTAL_LINK_PREFIX);
  const row = await audited<PortalLinkRow>(ctx, actor, 'portal.link', (made) => made.id, (tx) =>
    insertPortalLink(tx, {
      workspaceId: actor.workspaceId,
      memberEmail,
      readOnly: input.readOnly ?? false,
      ttlSeconds: Math.round(ttlMs / 1000),
      linkHash: sha256(secret),
      linkLifeSeconds: PORTAL_LINK_LIFE_SECONDS,
    }),
  );
  return { url: `${ctx.publicUrl}/integrations/#${secret}`, expiresAt: row.linkExpiresAt.toISOString() };
}

/** What opening a link gives the page: the session's token (only now) and what the page shows. */
export interface OpenedPortalSession {
  session: string;
  expiresAt: string;
  readOnly: boolean;
  workspace: { id: string; name: string };
  member: { email: string; role: 'owner' | 'admin' };
}

/**
 * Opens a link, once: a session token for the page, or null for a link that is malformed, used,
 * expired, revoked or unknown (one answer for all). Audited as `portal.open` from the page.
 */
export async function openPortalSession(ctx: IntegrationContext, linkSecret: string): Promise<OpenedPortalSession | null> {
  if (!isWellFormedPortalSecret(PORTAL_LINK_PREFIX, linkSecret)) return null;
  const token = generatePortalSecret(PORTAL_SESSION_PREFIX);
  const session = await transactionRetryingDeadlocks(ctx.db, async (tx) => {
    const opened = await openPortalLink(tx, sha256(linkSecret), sha256(token));
    if (opened) await recordAudit(tx, { workspaceId: opened.workspaceId, memberEmail: opened.memberEmail, source: 'page' }, 'portal.open', opened.id);
    return opened;
  });
  if (!session) return null;
  return {
    session: token,
    expiresAt: session.expiresAt.toISOString(),
    readOnly: session.readOnly,
    workspace: { id: session.workspaceId, name: session.workspaceName },
    member: { email: session.memberEmail, role: session.role },
  };
}

/** The live session a token names (not expired or revoked, its member still an owner or admin), or null. */
export async function activePortalSession(ctx: Pick<IntegrationContext, 'db'>, token: string): Promise<PortalSession | null> {
  if (!isWellFormedPortalSecret(PORTAL_SESSION_PREFIX, token)) return null;
  return findPortalSession(ctx.db, sha256(token));
}

/** Ends every session of the actor's workspace at once, and its links not yet opened. Audited as `portal.revoke`. */
export async function revokePortal(ctx: IntegrationContext, actor: Actor): Promise<{ workspaceId: string; revoked: number }> {
  const revoked = await audited(ctx, actor, 'portal.revoke', actor.workspaceId, (tx) => revokePortalSessions(tx, actor.workspaceId));
  return { workspaceId: actor.workspaceId, revoked };
}
