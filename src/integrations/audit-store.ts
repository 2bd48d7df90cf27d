import type { Queryable } from '../db/database.ts';
import type { Actor, Source } from './actor.ts';

/** The operations an audit entry names: what changed a workspace's keys, webhook endpoints or feeds, and who was let into its integrations page. */
export const AUDITED_OPERATIONS = [
  'key.create',
  'key.update',
  'key.rotate',
  'key.revoke',
  'webhook.add',
  'webhook.update',
  'webhook.remove',
  'webhook.enable',
  'webhook.test',
  'webhook.resend',
  'webhook.recover',
  'webhook.rotate-secret',
  'feed.create',
  'feed.revoke',
  'portal.link',
  'portal.open',
  'portal.revoke',
] as const;
export type AuditedOperation = (typeof AUDITED_OPERATIONS)[number];

export interface AuditEntry {
  id: string;
  workspaceId: string;
  /** The acting owner or admin; null for the operator at the CLI without --member. */
  memberEmail: string | null;
  operation: AuditedOperation;
  /** The key, endpoint, delivery's event or feed it acted on. */
  targetId: string | null;
  source: Source;
  at: string;
}

/** Records that `actor` did `operation` to `targetId`, after it succeeded. */
export async function recordAudit(db: Queryable, actor: Actor, operation: AuditedOperation, targetId: string | null): Promise<void> {
  await db.query('INSERT INTO integration_audit (workspace_id, member_email, operation, target_id, source) VALUES ($1, $2, $3, $4, $5)', [
    actor.workspaceId,
    actor.memberEmail,
    operation,
    targetId,
    actor.source,
  ]);
}

/** The most entries one read returns. */
export const MAX_AUDIT_ENTRIES = 1000;

/** A workspace's entries, oldest first, since a time when given; at most `MAX_AUDIT_ENTRIES` (the newest of them). */
export async function listAudit(db: Queryable, workspaceId: string, since: Date | null): Promise<AuditEntry[]> {
  const found = await db.query<{ id: string; workspace_id: string; member_email: string | null; operation: AuditedOperation; target_id: string | null; source: Source; at: Date }>(
    `SELECT * FROM (
       SELECT id, workspace_id, member_email, operation, target_id, source, at FROM integration_audit
        WHERE workspace_id = $1 AND ($2::timestamptz IS NULL OR at >= $2)
        ORDER BY at DESC, id DESC LIMIT ${MAX_AUDIT_ENTRIES}
     ) newest ORDER BY at, id`,
    [workspaceId, since],
  );
  return found.rows.map((row) => ({
    id: row.id,
    workspaceId: row.workspace_id,
    memberEmail: row.member_email,
    operation: row.operation,
    targetId: row.target_id,
    source: row.source,
    at: row.at.toISOString(),
  }));
}
