import { requireManager } from '../workspaces/member-store.ts';
import { readIssuerTag } from '../auth/issuer-key-store.ts';
import { generateFeedToken, sha256 } from '../auth/secret-format.ts';
import type { Database, Queryable } from '../db/database.ts';
import { dataVersionExpression, toDataVersion, type DataVersion } from '../answer-cache/data-version-store.ts';
import { InputError } from '../input-error.ts';

/** The refusal of an id no feed token has (or none of the workspace acted on). */
export const noFeedToken = (id: string) => new InputError(`No feed token with id ${JSON.stringify(id)}`, { field: 'id' });

export const FEED_PATH_PREFIX = '/api/calendar/v1/';

export interface IssuedFeedToken {
  id: string;
  /** The token itself: shown once, never stored. */
  token: string;
  /** The feed's path, token included, relative to the base address. */
  path: string;
}

export interface FeedTokenSummary {
  id: string;
  name: string;
  last4: string;
  createdAt: string;
  state: 'active' | 'revoked';
}

export function feedPath(token: string): string {
  return `${FEED_PATH_PREFIX}${token}.ics`;
}

export async function createFeedToken(
  db: Queryable,
  input: { workspaceId: string; memberEmail: string; name?: string | undefined },
): Promise<IssuedFeedToken> {
  const name = input.name?.trim() || 'Calendar feed';
  if (name.length > 200) throw new InputError('The feed name is longer than 200 characters');
  const memberId = await requireManager(db, input.workspaceId, input.memberEmail);
  const token = generateFeedToken(await readIssuerTag(db));
  const inserted = await db.query<{ id: string }>(
    `INSERT INTO feed_tokens (workspace_id, name, token_hash, last4, created_by, tagged) VALUES ($1, $2, $3, $4, $5, true) RETURNING id`,
    [input.workspaceId, name, sha256(token), token.slice(-4), memberId],
  );
  return { id: inserted.rows[0]!.id, token, path: feedPath(token) };
}

export async function listFeedTokens(db: Database, workspaceId: string): Promise<FeedTokenSummary[]> {
  const found = await db.query<{ id: string; name: string; last4: string; created_at: Date; revoked_at: Date | null }>(
    'SELECT id, name, last4, created_at, revoked_at FROM feed_tokens WHERE workspace_id = $1 ORDER BY created_at, id',
    [workspaceId],
  );
  return found.rows.map((row) => ({
    id: row.id,
    name: row.name,
    last4: row.last4,
    createdAt: row.created_at.toISOString(),
    state: row.revoked_at ? 'revoked' : 'active',
  }));
}

export async function revokeFeedToken(db: Queryable, id: string): Promise<{ id: string; state: 'revoked' }> {
  const updated = await db.query('UPDATE feed_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1', [id]);
  if (updated.rowCount === 0) throw noFeedToken(id);
  return { id, state: 'revoked' };
}

export interface ActiveFeed {
  id: string;
  workspaceId: string;
  /** The workspace's data version, read in the token's own statement (null: it has none). */
  dataVersion: DataVersion | null;
}

/**
 * The active feed behind a token's hash, `'revoked'` for a revoked token, or null when no feed has
 * it; never cached, so revocation takes effect at once. The workspace's data version comes with
 * it, so that the feed's ETag, and with it a 304, costs no statement of its own.
 */
export async function findFeed(db: Database, tokenHash: Buffer): Promise<ActiveFeed | 'revoked' | null> {
  const found = await db.query<{ id: string; workspace_id: string; revoked: boolean; data_version: string | null }>(
    `SELECT f.id, f.workspace_id, f.revoked_at IS NOT NULL AS revoked, ${dataVersionExpression('f.workspace_id')} AS data_version
       FROM feed_tokens f WHERE f.token_hash = $1`,
    [tokenHash],
  );
  const row = found.rows[0];
  if (!row) return null;
  return row.revoked ? 'revoked' : { id: row.id, workspaceId: row.workspace_id, dataVersion: toDataVersion(row.data_version) };
}
