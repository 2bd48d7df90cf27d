import type { Queryable } from '../db/database.ts';
import { transactionRetryingDeadlocks } from '../db/deadlock-retry.ts';
import { authorize, type Actor } from './actor.ts';
import { recordAudit, type AuditedOperation } from './audit-store.ts';
import type { IntegrationContext } from './context.ts';

/**
 * A change made for `actor` and its audit entry, in one transaction: the actor checked, the change
 * made, the entry recorded, or none of them. A removal of an endpoint may meet a worker's claim
 * locking its deliveries in another order; the transaction is then run again whole, which is the
 * same change (`transactionRetryingDeadlocks`).
 */
export function audited<T>(
  ctx: IntegrationContext,
  actor: Actor,
  operation: AuditedOperation,
  target: string | ((result: T) => string),
  change: (tx: Queryable) => Promise<T>,
): Promise<T> {
  return transactionRetryingDeadlocks(ctx.db, async (tx) => {
    await authorize(tx, actor);
    const result = await change(tx);
    await recordAudit(tx, actor, operation, typeof target === 'string' ? target : target(result));
    return result;
  });
}
