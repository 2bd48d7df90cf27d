import type { Database, Queryable } from '../db/database.ts';
import type { JoinedResource } from '../db/sql-builder.ts';
import { InputError } from '../input-error.ts';
import { requireManager } from '../workspaces/member-store.ts';
import { parseScopes, type Scope } from './scopes.ts';
import { readIssuerTag } from './issuer-key-store.ts';
import { generateApiKey, sha256 } from './secret-format.ts';

export type ApiKeyState = 'active' | 'revoked' | 'rotated';

export interface ApiKeySummary {
  id: string;
  name: string;
  scopes: Scope[];
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  state: ApiKeyState;
  /** False for a key issued before issuer tags: it works, and `key rotate` replaces it with a tagged one. */
  tagged: boolean;
}

export interface IssuedApiKey {
  id: string;
  /** The key itself: shown once, never stored. */
  key: string;
  scopes: Scope[];
}

export interface CreateApiKeyInput {
  workspaceId: string;
  memberEmail: string;
  scopes: string | readonly string[];
  name?: string | undefined;
}

function parseScopesOrThrow(scopes: string | readonly string[]): Scope[] {
  try {
    return parseScopes(scopes);
  } catch (error) {
    throw new InputError((error as Error).message);
  }
}

export async function createApiKey(db: Queryable, input: CreateApiKeyInput): Promise<IssuedApiKey> {
  const scopes = parseScopesOrThrow(input.scopes);
  const name = input.name?.trim() || `API key ${new Date().toISOString().slice(0, 10)}`;
  if (name.length > 200) throw new InputError('The key name is longer than 200 characters');
  const memberId = await requireManager(db, input.workspaceId, input.memberEmail);
  const key = generateApiKey(await readIssuerTag(db));
  const inserted = await db.query<{ id: string }>(
    `INSERT INTO api_keys (workspace_id, name, scopes, key_hash, last4, created_by, tagged)
     VALUES ($1, $2, $3, $4, $5, $6, true) RETURNING id`,
    [input.workspaceId, name, scopes, sha256(key), key.slice(-4), memberId],
  );
  return { id: inserted.rows[0]!.id, key, scopes };
}

export async function listApiKeys(db: Queryable, workspaceId: string): Promise<ApiKeySummary[]> {
  const found = await db.query<{
    id: string;
    name: string;
    scopes: Scope[];
    last4: string;
    created_at: Date;
    last_used_at: Date | null;
    revoked_at: Date | null;
    replaced_by: string | null;
    tagged: boolean;
  }>(
    `SELECT id, name, scopes, last4, created_at, last_used_at, revoked_at, replaced_by, tagged
       FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, id`,
    [workspaceId],
  );
  return found.rows.map((row) => ({
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    last4: row.last4,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    state: row.replaced_by ? 'rotated' : row.revoked_at ? 'revoked' : 'active',
    tagged: row.tagged,
  }));
}

export async function revokeApiKey(db: Queryable, id: string): Promise<{ id: string; state: ApiKeyState }> {
  const updated = await db.query(
    'UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING id',
    [id],
  );
  if (updated.rowCount === 0) throw new InputError(`No API key with id ${JSON.stringify(id)}`);
  return { id, state: 'revoked' };
}

/** A new key with the same workspace, name and scopes; the old one is refused from now on. */
export async function rotateApiKey(db: Database, id: string): Promise<{ id: string; key: string }> {
  return db.transaction(async (tx) => {
    const found = await tx.query<{ workspace_id: string; name: string; scopes: Scope[]; created_by: string; revoked_at: Date | null }>(
      'SELECT workspace_id, name, scopes, created_by, revoked_at FROM api_keys WHERE id = $1 FOR UPDATE',
      [id],
    );
    const old = found.rows[0];
    if (!old) throw new InputError(`No API key with id ${JSON.stringify(id)}`);
    if (old.revoked_at) throw new InputError(`API key ${id} is already revoked or rotated`);
    const key = generateApiKey(await readIssuerTag(tx));
    const inserted = await tx.query<{ id: string }>(
      `INSERT INTO api_keys (workspace_id, name, scopes, key_hash, last4, created_by, tagged)
       VALUES ($1, $2, $3, $4, $5, $6, true) RETURNING id`,
      [old.workspace_id, old.name, old.scopes, sha256(key), key.slice(-4), old.created_by],
    );
    const newId = inserted.rows[0]!.id;
    await tx.query('UPDATE api_keys SET revoked_at = now(), replaced_by = $2 WHERE id = $1', [id, newId]);
    return { id: newId, key };
  });
}

export interface ActiveApiKey {
  id: string;
  workspaceId: string;
  scopes: ReadonlySet<Scope>;
  /** The key's workspace row as the data layer reads it, when asked for (see `findActiveApiKey`). */
  workspace?: Record<string, unknown>;
}

const WORKSPACE_PREFIX = 'workspace.';

/**
 * The active key with this hash, `'revoked'` for a revoked or rotated one, or null when no key has
 * it. Given how the data layer reads a workspace row, the key's workspace is read in the same
 * statement, so that a request that needs the workspace needs no statement of its own for it.
 */
export async function findApiKey(db: Queryable, keyHash: Buffer, workspace?: JoinedResource): Promise<ActiveApiKey | 'revoked' | null> {
  const text = workspace
    ? `SELECT k.id AS key_id, k.workspace_id AS key_workspace_id, k.scopes AS key_scopes, k.revoked_at IS NOT NULL AS key_revoked,
              ${workspace.columns('w', WORKSPACE_PREFIX)}
         FROM api_keys k JOIN ${workspace.table} w ON w.${workspace.keyColumn} = k.workspace_id
        WHERE k.key_hash = $1`
    : 'SELECT id AS key_id, workspace_id AS key_workspace_id, scopes AS key_scopes, revoked_at IS NOT NULL AS key_revoked FROM api_keys WHERE key_hash = $1';
  const found = await db.query<{ key_id: string; key_workspace_id: string; key_scopes: Scope[]; key_revoked: boolean } & Record<string, unknown>>(text, [keyHash]);
  const row = found.rows[0];
  if (!row) return null;
  if (row.key_revoked) return 'revoked';
  const key: ActiveApiKey = { id: row.key_id, workspaceId: row.key_workspace_id, scopes: new Set(row.key_scopes) };
  if (workspace) {
    key.workspace = workspace.row(row, WORKSPACE_PREFIX);
  }
  return key;
}

/** Revokes the active keys of a workspace that carry one of these names; returns their ids. */
export async function revokeKeysNamed(db: Queryable, workspaceId: string, names: readonly string[]): Promise<string[]> {
  const revoked = await db.query<{ id: string }>(
    'UPDATE api_keys SET revoked_at = now() WHERE workspace_id = $1 AND name = ANY($2) AND revoked_at IS NULL RETURNING id',
    [workspaceId, names],
  );
  return revoked.rows.map((row) => row.id);
}

/** How many active keys of a workspace end in one of these last-4 values. */
export async function countActiveKeysEndingIn(db: Queryable, workspaceId: string, last4s: readonly string[]): Promise<number> {
  const live = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL AND last4 = ANY($2)',
    [workspaceId, last4s],
  );
  return live.rows[0]?.n ?? 0;
}

/** Records last-used times collected in memory, one statement for many keys. */
export async function recordApiKeyUse(db: Queryable, uses: ReadonlyMap<string, Date>): Promise<void> {
  if (uses.size === 0) return;
  await db.query(
    `UPDATE api_keys k SET last_used_at = greatest(k.last_used_at, u.used_at)
       FROM unnest($1::text[], $2::timestamptz[]) AS u(id, used_at) WHERE k.id = u.id`,
    [[...uses.keys()], [...uses.values()]],
  );
}
