import { parseInstant } from '../auth/key-policy.ts';
import { authorize, labelsOf, type Actor } from './actor.ts';
import { listAudit, type AuditEntry } from './audit-store.ts';
import type { IntegrationContext } from './context.ts';

/** What was done to the workspace's integrations, oldest first, since an ISO 8601 time when given. */
export async function auditEntries(ctx: IntegrationContext, actor: Actor, since?: string): Promise<AuditEntry[]> {
  const from = since === undefined ? null : parseInstant(labelsOf(actor).since, since);
  await authorize(ctx.db, actor);
  return listAudit(ctx.db, actor.workspaceId, from);
}
