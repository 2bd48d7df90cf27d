import type { IssuedCredentials } from '../auth/issued-credentials.ts';
import { isWellFormedFeedToken, sha256 } from '../auth/secret-format.ts';
import type { Database } from '../db/database.ts';
import { findFeed, type ActiveFeed } from './feed-token-store.ts';

/**
 * The active feed behind a token from a feed's path, or null when the token is malformed, was
 * never issued (refused in memory), is revoked or is unknown; the caller answers all of these the
 * same way (docs/contract-rules.md, calendar.not-found).
 */
export async function activeFeedOf(db: Database, issued: IssuedCredentials, token: string): Promise<ActiveFeed | null> {
  if (!isWellFormedFeedToken(token)) return null;
  const hash = sha256(token);
  const hex = hash.toString('hex');
  if (!(await issued.mayBeActive(token, hex))) return null;
  const found = await findFeed(db, hash);
  if (found !== null && found !== 'revoked') return found;
  await issued.refused(hex, found === 'revoked');
  return null;
}
