/** A workspace's calendar feeds, as its owners and admins manage them. */
import { createFeedToken, listFeedTokens, revokeFeedToken, type FeedTokenSummary, type IssuedFeedToken } from '../calendar/feed-token-store.ts';
import { InputError } from '../input-error.ts';
import { authorize, type Actor } from './actor.ts';
import { recordAudit } from './audit-store.ts';
import type { IntegrationContext } from './context.ts';
import { assertInWorkspace } from './target-store.ts';

/** A new feed on the actor's behalf; its token (and so its URL) is in the answer only now. */
export async function createFeed(ctx: IntegrationContext, actor: Actor, input: { name?: string | undefined }): Promise<IssuedFeedToken> {
  if (actor.memberEmail === null) throw new InputError('A feed is created on behalf of an owner or admin: name them');
  // Checked here, in the words of the actor's way in, before the store checks it again as it writes.
  await authorize(ctx.db, actor);
  const issued = await createFeedToken(ctx.db, { workspaceId: actor.workspaceId, memberEmail: actor.memberEmail, name: input.name });
  await recordAudit(ctx.db, actor, 'feed.create', issued.id);
  return issued;
}

/** The workspace's feeds, no secrets. */
export async function listFeeds(ctx: IntegrationContext, actor: Actor): Promise<FeedTokenSummary[]> {
  await authorize(ctx.db, actor);
  return listFeedTokens(ctx.db, actor.workspaceId);
}

/** Revokes a feed: refused from its next request on. */
export async function revokeFeed(ctx: IntegrationContext, actor: Actor, id: string): Promise<{ id: string; state: 'revoked' }> {
  await authorize(ctx.db, actor);
  await assertInWorkspace(ctx.db, 'feed', id, actor.workspaceId);
  const revoked = await revokeFeedToken(ctx.db, id);
  await recordAudit(ctx.db, actor, 'feed.revoke', id);
  return revoked;
}
