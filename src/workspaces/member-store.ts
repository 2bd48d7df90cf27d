import type { Queryable } from '../db/database.ts';
import { InputError } from '../input-error.ts';
import { assertWorkspaceExists, workspaceExists } from './workspace-store.ts';

export type MemberRole = 'owner' | 'admin' | 'member';

/** Adds a member; an e-mail address already in the workspace (in any case) is refused. */
export async function addMember(
  db: Queryable,
  input: { workspaceId: string; email: string; name: string; role: MemberRole },
): Promise<{ id: string }> {
  await assertWorkspaceExists(db, input.workspaceId);
  const existing = await db.query('SELECT 1 FROM members WHERE workspace_id = $1 AND lower(email) = lower($2)', [input.workspaceId, input.email]);
  if (existing.rowCount) throw new InputError(`A member with e-mail ${input.email} already exists in workspace ${input.workspaceId}`);
  const created = await db.query<{ id: string }>(
    'INSERT INTO members (workspace_id, email, name, role) VALUES ($1, $2, $3, $4) RETURNING id',
    [input.workspaceId, input.email, input.name, input.role],
  );
  return { id: created.rows[0]!.id };
}

/**
 * An acting member who may not do what was asked: not in the workspace, or neither its owner nor
 * an admin (internal GraphQL answers it with FORBIDDEN, the CLI as any refused input).
 */
export class NotPermittedError extends InputError {}

export function isNotPermittedError(error: unknown): error is NotPermittedError {
  return error instanceof NotPermittedError;
}

/**
 * The member on whose behalf credentials are created: keys, webhook endpoints and feed tokens are
 * created only for an owner or admin of the workspace (docs/contract-rules.md, `auth.who-creates-keys`).
 */
export async function requireManager(db: Queryable, workspaceId: string, email: string, options: { named?: string | undefined } = {}): Promise<string> {
  if (!(await workspaceExists(db, workspaceId))) throw new NotPermittedError(`No workspace with id ${JSON.stringify(workspaceId)}`);
  const found = await db.query<{ id: string; role: string }>(
    'SELECT id, role FROM members WHERE workspace_id = $1 AND lower(email) = lower($2)',
    [workspaceId, email],
  );
  const member = found.rows[0];
  // An API's answer names the argument that gave the e-mail, never the e-mail itself (personal data); the operator's CLI names it.
  const { named } = options;
  if (!member) throw new NotPermittedError(`No member with ${named ? `the e-mail given as ${named}` : `e-mail ${JSON.stringify(email)}`} in workspace ${workspaceId}`);
  if (member.role !== 'owner' && member.role !== 'admin') {
    throw new NotPermittedError(`${named ? `The member given as ${named}` : `Member ${email}`} has role ${member.role}; only an owner or admin may do this`);
  }
  return member.id;
}

/** The e-mail of the workspace's first owner (or, lacking one, admin), or null. */
export async function findManagerEmail(db: Queryable, workspaceId: string): Promise<string | null> {
  const owner = await db.query<{ email: string }>(
    "SELECT email FROM members WHERE workspace_id = $1 AND role IN ('owner', 'admin') ORDER BY role, created_at LIMIT 1",
    [workspaceId],
  );
  return owner.rows[0]?.email ?? null;
}
