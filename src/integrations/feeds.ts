/** A workspace's calendar feeds, as its owners and admins manage them. */
import { createFeedToken, listFeedTokens, revokeFeedToken, type FeedTokenSummary, type IssuedFeedToken } from '../calendar/feed-token-store.ts';
import { InputError } from '../input-error.ts';
import { authorize, type Actor } from './actor.ts';
import { audited } from './audited.ts';
import type { IntegrationContext } from './context.ts';
import { assertInWorkspace } from './target-store.ts';

/** A new feed on the actor's behalf; its token (and so its URL) is in the answer only now. */
export async function createFeed(ctx: IntegrationContext, actor: Actor, input: { name?: string | undefined }): Promise<IssuedFeedToken> {
  if (actor.memberEmail === null) throw new InputError('A feed is created on behalf of an owner or admin: name them');
  const memberEmail = actor.memberEmail;
  // The actor is checked in the words of its way in (audited), before the store checks it again as it writes.
  return audited(ctx, actor, 'feed.create', (issued) => issued.id, (tx) => createFeedToken(tx, { workspaceId: actor.workspaceId, memberEmail, name: input.name }));
}

/** The workspace's feeds, no secrets. */
export async function listFeeds(ctx: IntegrationContext, actor: Actor): Promise<FeedTokenSummary[]> {
  await authorize(ctx.db, actor);
  return listFeedTokens(ctx.db, actor.workspaceId);
}

/** Revokes a feed: refused from its next request on. */
export async function revokeFeed(ctx: IntegrationContext, actor: Actor, id: string): Promise<{ id: string; state: 'revoked' }> {
  return audited(ctx, actor, 'feed.revoke', id, async (tx) => {
    await assertInWorkspace(tx, 'feed', id, actor.workspaceId);
    return revokeFeedToken(tx, id);
  });
}
