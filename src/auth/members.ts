import type { Database } from '../db/database.ts';
import { InputError } from '../input-error.ts';

type Queryable = Pick<Database, 'query'>;

export async function assertWorkspaceExists(db: Queryable, workspaceId: string): Promise<void> {
  const found = await db.query('SELECT 1 FROM workspaces WHERE id = $1', [workspaceId]);
  if (found.rowCount === 0) throw new InputError(`No workspace with id ${JSON.stringify(workspaceId)}`);
}

/**
 * The member on whose behalf credentials are created: keys, webhook endpoints and feed tokens are
 * created only for an owner or admin of the workspace (contract part 5).
 */
export async function requireManager(db: Queryable, workspaceId: string, email: string): Promise<string> {
  await assertWorkspaceExists(db, workspaceId);
  const found = await db.query<{ id: string; role: string }>(
    'SELECT id, role FROM members WHERE workspace_id = $1 AND lower(email) = lower($2)',
    [workspaceId, email],
  );
  const member = found.rows[0];
  if (!member) throw new InputError(`No member with e-mail ${JSON.stringify(email)} in workspace ${workspaceId}`);
  if (member.role !== 'owner' && member.role !== 'admin') {
    throw new InputError(`Member ${email} has role ${member.role}; only an owner or admin may do this`);
  }
  return member.id;
}
