import type { Database, Queryable } from '../db/database.ts';
import type { JoinedResource } from '../sql/sql-builder.ts';
import { InputError } from '../input-error.ts';
import { requireManager } from '../workspaces/member-store.ts';
import { AllowList } from './key-policy.ts';
import { parseScopes, type Scope } from './scopes.ts';
import { readIssuerTag } from './issuer-key-store.ts';
import { generateApiKey, sha256 } from './secret-format.ts';

/** The refusal of an id no key has (or none of the workspace acted on). */
export const noApiKey = (id: string) => new InputError(`No API key with id ${JSON.stringify(id)}`, { field: 'id' });

export type ApiKeyState = 'active' | 'expired' | 'revoked' | 'rotated';

export interface ApiKeySummary {
  id: string;
  name: string;
  scopes: Scope[];
  last4: string;
  createdAt: string;
  /** When the key stops working; null when it does not expire. */
  expiresAt: string | null;
  /** The networks it may be used from (CIDR ranges); null for anywhere. */
  allowedIps: string[] | null;
  /** Exact to about a minute (written at most once per key and minute). */
  lastUsedAt: string | null;
  /** The client's network at the last use: its address truncated to /24 or /48. */
  lastUsedNetwork: string | null;
  state: ApiKeyState;
  /** False for a key issued before issuer tags: it works, and `key rotate` replaces it with a tagged one. */
  tagged: boolean;
}

export interface IssuedApiKey {
  id: string;
  /** The key itself: shown once, never stored. */
  key: string;
  scopes: Scope[];
  expiresAt: string | null;
  allowedIps: string[] | null;
}

export interface CreateApiKeyInput {
  workspaceId: string;
  memberEmail: string;
  scopes: string | readonly string[];
  name?: string | undefined;
  /** Parsed by key-policy.ts: when the key stops working. */
  expiresAt?: Date | null;
  /** Parsed by key-policy.ts: canonical CIDR ranges. */
  allowedIps?: readonly string[] | null;
}

function parseScopesOrThrow(scopes: string | readonly string[]): Scope[] {
  try {
    return parseScopes(scopes);
  } catch (error) {
    throw new InputError((error as Error).message, { field: 'scopes' });
  }
}

export async function createApiKey(db: Queryable, input: CreateApiKeyInput): Promise<IssuedApiKey> {
  const scopes = parseScopesOrThrow(input.scopes);
  const name = keyName(input.name);
  const memberId = await requireManager(db, input.workspaceId, input.memberEmail);
  const key = generateApiKey(await readIssuerTag(db));
  const inserted = await db.query<{ id: string; expires_at: Date | null; allowed_ips: string[] | null }>(
    `INSERT INTO api_keys (workspace_id, name, scopes, key_hash, last4, created_by, tagged, expires_at, allowed_ips)
     VALUES ($1, $2, $3, $4, $5, $6, true, $7, $8::cidr[]) RETURNING id, expires_at, allowed_ips`,
    [input.workspaceId, name, scopes, sha256(key), key.slice(-4), memberId, input.expiresAt ?? null, input.allowedIps ?? null],
  );
  const row = inserted.rows[0]!;
  return { id: row.id, key, scopes, expiresAt: row.expires_at?.toISOString() ?? null, allowedIps: row.allowed_ips };
}

export async function listApiKeys(db: Queryable, workspaceId: string): Promise<ApiKeySummary[]> {
  const found = await db.query<{
    id: string;
    name: string;
    scopes: Scope[];
    last4: string;
    created_at: Date;
    expires_at: Date | null;
    expired: boolean;
    allowed_ips: string[] | null;
    last_used_at: Date | null;
    last_used_network: string | null;
    revoked_at: Date | null;
    replaced_by: string | null;
    tagged: boolean;
  }>(
    `SELECT id, name, scopes, last4, created_at, expires_at, coalesce(expires_at <= now(), false) AS expired, allowed_ips,
            last_used_at, last_used_network, revoked_at, replaced_by, tagged
       FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, id`,
    [workspaceId],
  );
  return found.rows.map((row) => ({
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    last4: row.last4,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at?.toISOString() ?? null,
    allowedIps: row.allowed_ips,
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    lastUsedNetwork: row.last_used_network,
    state: row.replaced_by ? 'rotated' : row.revoked_at ? 'revoked' : row.expired ? 'expired' : 'active',
    tagged: row.tagged,
  }));
}

/** Refuses an id no key has, naming it. */
export async function assertApiKeyExists(db: Queryable, id: string): Promise<void> {
  const found = await db.query('SELECT 1 FROM api_keys WHERE id = $1', [id]);
  if (found.rowCount === 0) throw noApiKey(id);
}

/** What `updateApiKey` may change; only what is given changes. */
export interface ApiKeyChanges {
  name?: string | undefined;
  scopes?: string | readonly string[] | undefined;
  /** When it stops working; null: never. */
  expiresAt?: Date | null | undefined;
  /** Canonical CIDR ranges (key-policy.ts); null: any address. */
  allowedIps?: readonly string[] | null | undefined;
}

export interface UpdatedApiKey {
  id: string;
  name: string;
  scopes: Scope[];
  expiresAt: string | null;
  allowedIps: string[] | null;
}

/** A key's name as given, or a dated default; refused past 200 characters. */
export function keyName(given: string | undefined, label = 'The key name'): string {
  const name = given?.trim() || `API key ${new Date().toISOString().slice(0, 10)}`;
  if (name.length > 200) throw new InputError(`${label} is longer than 200 characters`, { field: label });
  return name;
}

/**
 * Changes a key's name, scopes, expiry or allow list; a revoked or rotated key is refused. Every
 * instance applies a change within the key cache's time (docs/contract-rules.md, auth.revocation),
 * as it applies a revocation.
 */
export async function updateApiKey(db: Queryable, id: string, changes: ApiKeyChanges): Promise<UpdatedApiKey> {
  const scopes = changes.scopes === undefined ? null : parseScopesOrThrow(changes.scopes);
  const name = changes.name === undefined ? null : keyName(changes.name);
  const updated = await db.query<{ revoked: boolean; name: string; scopes: Scope[]; expires_at: Date | null; allowed_ips: string[] | null }>(
    `UPDATE api_keys SET
        name = CASE WHEN revoked_at IS NULL THEN coalesce($2, name) ELSE name END,
        scopes = CASE WHEN revoked_at IS NULL THEN coalesce($3, scopes) ELSE scopes END,
        expires_at = CASE WHEN revoked_at IS NULL AND $4 THEN $5::timestamptz ELSE expires_at END,
        allowed_ips = CASE WHEN revoked_at IS NULL AND $6 THEN $7::cidr[] ELSE allowed_ips END
      WHERE id = $1
     RETURNING revoked_at IS NOT NULL AS revoked, name, scopes, expires_at, allowed_ips`,
    [id, name, scopes, changes.expiresAt !== undefined, changes.expiresAt ?? null, changes.allowedIps !== undefined, changes.allowedIps ?? null],
  );
  const row = updated.rows[0];
  if (!row) throw noApiKey(id);
  if (row.revoked) throw new InputError(`API key ${id} is revoked or rotated; it no longer changes`);
  return { id, name: row.name, scopes: row.scopes, expiresAt: row.expires_at?.toISOString() ?? null, allowedIps: row.allowed_ips };
}

export async function revokeApiKey(db: Queryable, id: string): Promise<{ id: string; state: ApiKeyState }> {
  const updated = await db.query(
    'UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING id',
    [id],
  );
  if (updated.rowCount === 0) throw noApiKey(id);
  return { id, state: 'revoked' };
}

/**
 * A new key with the same workspace, name, scopes and allow list, expiring as long after its
 * creation as the old one did after its own; the old one is refused from now on. An expired key
 * may be rotated (its replacement gets a fresh lifetime), a revoked or rotated one not.
 */
export async function rotateApiKey(db: Database, id: string): Promise<{ id: string; key: string; expiresAt: string | null }> {
  return db.transaction((tx) => rotateApiKeyIn(tx, id));
}

/** `rotateApiKey` in the caller's transaction. */
export async function rotateApiKeyIn(tx: Queryable, id: string): Promise<{ id: string; key: string; expiresAt: string | null }> {
  const found = await tx.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM api_keys WHERE id = $1 FOR UPDATE', [id]);
  const old = found.rows[0];
  if (!old) throw noApiKey(id);
  if (old.revoked_at) throw new InputError(`API key ${id} is already revoked or rotated`);
  const key = generateApiKey(await readIssuerTag(tx));
  const inserted = await tx.query<{ id: string; expires_at: Date | null }>(
    `INSERT INTO api_keys (workspace_id, name, scopes, key_hash, last4, created_by, tagged, allowed_ips, expires_at)
     SELECT workspace_id, name, scopes, $2, $3, created_by, true, allowed_ips, now() + (expires_at - created_at)
       FROM api_keys WHERE id = $1
     RETURNING id, expires_at`,
    [id, sha256(key), key.slice(-4)],
  );
  const { id: newId, expires_at: expiresAt } = inserted.rows[0]!;
  await tx.query('UPDATE api_keys SET revoked_at = now(), replaced_by = $2 WHERE id = $1', [id, newId]);
  return { id: newId, key, expiresAt: expiresAt?.toISOString() ?? null };
}

export interface ActiveApiKey {
  id: string;
  workspaceId: string;
  scopes: ReadonlySet<Scope>;
  /** When the key stops working, in ms since the epoch; null when it does not expire. */
  expiresAt: number | null;
  /** The networks the key may be used from; null for anywhere. */
  allowedFrom: AllowList | null;
  /** The key's workspace row as the data layer reads it, when asked for (see `findActiveApiKey`). */
  workspace?: Record<string, unknown>;
}

const WORKSPACE_PREFIX = 'workspace.';

const KEY_COLUMNS = (k: string) =>
  `${k}id AS key_id, ${k}workspace_id AS key_workspace_id, ${k}scopes AS key_scopes, ${k}revoked_at IS NOT NULL AS key_revoked,
   ${k}expires_at AS key_expires_at, ${k}allowed_ips AS key_allowed_ips`;

/**
 * The active key with this hash, `'revoked'` for a revoked, rotated or expired one (expired by
 * this process's clock at `now`, as the key cache judges it too), or null when no key has it.
 * Given how the data layer reads a workspace row, the key's workspace is read in the same
 * statement, so that a request that needs the workspace needs no statement of its own for it.
 */
export async function findApiKey(db: Queryable, keyHash: Buffer, workspace?: JoinedResource, now = Date.now()): Promise<ActiveApiKey | 'revoked' | null> {
  const text = workspace
    ? `SELECT ${KEY_COLUMNS('k.')}, ${workspace.columns('w', WORKSPACE_PREFIX)}
         FROM api_keys k JOIN ${workspace.table} w ON w.${workspace.keyColumn} = k.workspace_id
        WHERE k.key_hash = $1`
    : `SELECT ${KEY_COLUMNS('')} FROM api_keys WHERE key_hash = $1`;
  type KeyRow = { key_id: string; key_workspace_id: string; key_scopes: Scope[]; key_revoked: boolean; key_expires_at: Date | null; key_allowed_ips: string[] | null };
  const found = await db.query<KeyRow & Record<string, unknown>>(text, [keyHash]);
  const row = found.rows[0];
  if (!row) return null;
  const expiresAt = row.key_expires_at?.getTime() ?? null;
  if (row.key_revoked || (expiresAt !== null && expiresAt <= now)) return 'revoked';
  const key: ActiveApiKey = {
    id: row.key_id,
    workspaceId: row.key_workspace_id,
    scopes: new Set(row.key_scopes),
    expiresAt,
    allowedFrom: row.key_allowed_ips ? new AllowList(row.key_allowed_ips) : null,
  };
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
