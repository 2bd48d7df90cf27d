import type { Queryable } from '../db/database.ts';
import { InputError } from '../input-error.ts';

export async function createWorkspace(db: Queryable, name: string): Promise<{ id: string }> {
  const created = await db.query<{ id: string }>('INSERT INTO workspaces (name) VALUES ($1) RETURNING id', [name]);
  return { id: created.rows[0]!.id };
}

export async function workspaceExists(db: Queryable, workspaceId: string): Promise<boolean> {
  const found = await db.query('SELECT 1 FROM workspaces WHERE id = $1', [workspaceId]);
  return (found.rowCount ?? 0) > 0;
}

export async function assertWorkspaceExists(db: Queryable, workspaceId: string): Promise<void> {
  if (!(await workspaceExists(db, workspaceId))) throw new InputError(`No workspace with id ${JSON.stringify(workspaceId)}`);
}

/** The oldest workspace of that name that has never had an API key (the embedded template's demo). */
export async function findKeylessWorkspaceNamed(db: Queryable, workspaceName: string): Promise<string | null> {
  const found = await db.query<{ id: string }>(
    `SELECT w.id FROM workspaces w WHERE w.name = $1
       AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.workspace_id = w.id)
     ORDER BY w.created_at LIMIT 1`,
    [workspaceName],
  );
  return found.rows[0]?.id ?? null;
}

/**
 * The newest workspace named `workspaceName` that holds a key whose name starts with `keyPrefix`,
 * and that key's name; null when none does.
 */
export async function findWorkspaceWithKeyNamedLike(db: Queryable, workspaceName: string, keyPrefix: string): Promise<{ id: string; keyName: string } | null> {
  const found = await db.query<{ id: string; key_name: string }>(
    `SELECT w.id, k.name AS key_name FROM workspaces w JOIN api_keys k ON k.workspace_id = w.id
      WHERE w.name = $1 AND starts_with(k.name, $2)
      ORDER BY w.created_at DESC, k.created_at DESC LIMIT 1`,
    [workspaceName, keyPrefix],
  );
  const row = found.rows[0];
  return row ? { id: row.id, keyName: row.key_name } : null;
}
