import { noApiKey } from '../auth/api-key-store.ts';
import { noFeedToken } from '../calendar/feed-token-store.ts';
import type { Queryable } from '../db/database.ts';
import type { InputError } from '../input-error.ts';
import { noEndpoint } from '../webhooks/endpoint-store.ts';

/** What an operation may act on by id, with the refusal of an id none has. */
const TARGETS = {
  key: { table: 'api_keys', missing: noApiKey },
  endpoint: { table: 'webhook_endpoints', missing: noEndpoint },
  feed: { table: 'feed_tokens', missing: noFeedToken },
} as const satisfies Record<string, { table: string; missing: (id: string) => InputError }>;

export type TargetKind = keyof typeof TARGETS;

/** The workspace a key, endpoint or feed belongs to; refused as unknown when none has the id. */
export async function workspaceOf(db: Queryable, kind: TargetKind, id: string): Promise<string> {
  const { table, missing } = TARGETS[kind];
  const found = await db.query<{ workspace_id: string }>(`SELECT workspace_id FROM ${table} WHERE id = $1`, [id]);
  const row = found.rows[0];
  if (!row) throw missing(id);
  return row.workspace_id;
}

/**
 * Refuses an id that names nothing of the workspace, in the words of an unknown id: whoever
 * manages one workspace learns nothing of another's keys, endpoints or feeds.
 */
export async function assertInWorkspace(db: Queryable, kind: TargetKind, id: string, workspaceId: string): Promise<void> {
  const { table, missing } = TARGETS[kind];
  const found = await db.query(`SELECT 1 FROM ${table} WHERE id = $1 AND workspace_id = $2`, [id, workspaceId]);
  if (found.rowCount === 0) throw missing(id);
}
