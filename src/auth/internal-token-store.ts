import type { Queryable } from '../db/database.ts';
import { InputError } from '../input-error.ts';
import { generateInternalToken, sha256 } from './secret-format.ts';

/** The name the audit trail gives requests made with `INTERNAL_API_TOKEN`; no named token may take it. */
export const BOOTSTRAP_TOKEN_NAME = 'bootstrap';

/**
 * Which documents a token may run (docs/internal-graphql.md, Trusted documents): every one (`any`),
 * every one with those not registered for it logged (`log`), registered ones only (`trusted`).
 */
export const DOCUMENT_MODES = ['any', 'log', 'trusted'] as const;
export type DocumentMode = (typeof DOCUMENT_MODES)[number];

/** The highest budget a token may be given, in cost points per minute. */
export const MAX_COST_PER_MINUTE = 1_000_000_000;

/** `--documents` → a mode, refusing anything else. */
export function parseDocumentMode(value: string): DocumentMode {
  const mode = value.trim();
  if (!(DOCUMENT_MODES as readonly string[]).includes(mode)) throw new InputError(`--documents must be one of ${DOCUMENT_MODES.join(', ')}`);
  return mode as DocumentMode;
}

/**
 * `--cost-per-minute` → a positive whole number of points, or `default` (the service's setting,
 * stored as null). Not null itself: commander turns an option parsed to null into an empty string.
 */
export function parseCostPerMinute(value: string): number | 'default' {
  const text = value.trim();
  if (text === 'default') return 'default';
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > MAX_COST_PER_MINUTE) {
    throw new InputError(`--cost-per-minute must be a whole number from 1 to ${MAX_COST_PER_MINUTE}, or "default"`);
  }
  return Number(text);
}

export interface IssuedInternalToken {
  id: string;
  name: string;
  /** The token itself: shown once, never stored. */
  token: string;
  /** The workspaces it may read; null for every workspace. */
  workspaces: string[] | null;
  documents: DocumentMode;
  /** Its budget of cost points per minute; null for the service's default. */
  costPerMinute: number | null;
  /** Whether it reads personal data (the personal-data grant). */
  personalData: boolean;
  /** Whether it manages integrations on behalf of owners and admins (the integrations grant). */
  integrations: boolean;
}

export interface InternalTokenSummary {
  id: string;
  name: string;
  last4: string;
  workspaces: string[] | null;
  documents: DocumentMode;
  costPerMinute: number | null;
  personalData: boolean;
  integrations: boolean;
  createdAt: string;
  state: 'active' | 'revoked';
}

/** Who an internal request is: a named token, or the bootstrap token (id null). */
export interface InternalPrincipal {
  id: string | null;
  name: string;
  /** The workspaces it may read; null for every workspace. */
  workspaces: readonly string[] | null;
  documents: DocumentMode;
  /** Its budget of cost points per minute; null for the service's default. */
  costPerMinute: number | null;
  /** Whether it may read personal data (docs/internal-graphql.md, Personal data). */
  personalData: boolean;
  /** Whether it may manage integrations (docs/internal-graphql.md, Integrations). */
  integrations: boolean;
}

/** Comma-separated workspace ids → the distinct ids, refusing blanks. */
export function parseWorkspaceList(list: string): string[] {
  const ids = list.split(',').map((id) => id.trim());
  if (ids.some((id) => id === '')) throw new InputError('--workspaces must be comma-separated workspace ids, none of them empty');
  return [...new Set(ids)];
}

export async function createInternalToken(
  db: Queryable,
  input: {
    name: string;
    workspaces?: readonly string[] | null | undefined;
    documents?: DocumentMode | undefined;
    costPerMinute?: number | null | undefined;
    /** The personal-data grant; off unless given. */
    personalData?: boolean | undefined;
    /** The integrations grant; off unless given. */
    integrations?: boolean | undefined;
  },
): Promise<IssuedInternalToken> {
  const name = input.name.trim();
  if (name === '') throw new InputError('The token name must not be empty');
  if (name.length > 100) throw new InputError('The token name is longer than 100 characters');
  if (name === BOOTSTRAP_TOKEN_NAME) throw new InputError(`The name "${BOOTSTRAP_TOKEN_NAME}" is reserved for INTERNAL_API_TOKEN`);
  const workspaces = input.workspaces && input.workspaces.length > 0 ? [...new Set(input.workspaces)] : null;
  if (workspaces) {
    const found = await db.query<{ id: string }>('SELECT id FROM workspaces WHERE id = ANY($1)', [workspaces]);
    const known = new Set(found.rows.map((row) => row.id));
    const missing = workspaces.filter((id) => !known.has(id));
    if (missing.length > 0) throw new InputError(`No workspace with id ${missing.map((id) => JSON.stringify(id)).join(', ')}`);
  }
  const token = generateInternalToken();
  const documents = input.documents ?? 'any';
  const costPerMinute = input.costPerMinute ?? null;
  const personalData = input.personalData ?? false;
  const integrations = input.integrations ?? false;
  try {
    const inserted = await db.query<{ id: string }>(
      'INSERT INTO internal_tokens (name, token_hash, last4, workspaces, documents, cost_per_minute, personal_data, integrations) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id',
      [name, sha256(token), token.slice(-4), workspaces, documents, costPerMinute, personalData, integrations],
    );
    return { id: inserted.rows[0]!.id, name, token, workspaces, documents, costPerMinute, personalData, integrations };
  } catch (error) {
    if ((error as { constraint?: string }).constraint === 'internal_tokens_active_name') {
      throw new InputError(`An active internal token is already named ${JSON.stringify(name)}; revoke it first or choose another name`);
    }
    throw error;
  }
}

export async function listInternalTokens(db: Queryable): Promise<InternalTokenSummary[]> {
  const found = await db.query<{
    id: string;
    name: string;
    last4: string;
    workspaces: string[] | null;
    documents: DocumentMode;
    cost_per_minute: number | null;
    personal_data: boolean;
    integrations: boolean;
    created_at: Date;
    revoked_at: Date | null;
  }>('SELECT id, name, last4, workspaces, documents, cost_per_minute, personal_data, integrations, created_at, revoked_at FROM internal_tokens ORDER BY created_at, id');
  return found.rows.map((row) => ({
    id: row.id,
    name: row.name,
    last4: row.last4,
    workspaces: row.workspaces,
    documents: row.documents,
    costPerMinute: row.cost_per_minute,
    personalData: row.personal_data,
    integrations: row.integrations,
    createdAt: row.created_at.toISOString(),
    state: row.revoked_at ? 'revoked' : 'active',
  }));
}

/** Revokes a token by id or by its (active) name; it is refused from the next request on. */
export async function revokeInternalToken(db: Queryable, by: { id: string } | { name: string }): Promise<{ id: string; name: string; state: 'revoked' }> {
  const updated =
    'id' in by
      ? await db.query<{ id: string; name: string }>(
          'UPDATE internal_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING id, name',
          [by.id],
        )
      : await db.query<{ id: string; name: string }>(
          'UPDATE internal_tokens SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL RETURNING id, name',
          [by.name],
        );
  const row = updated.rows[0];
  if (!row) throw new InputError('id' in by ? `No internal token with id ${JSON.stringify(by.id)}` : `No active internal token named ${JSON.stringify(by.name)}`);
  return { id: row.id, name: row.name, state: 'revoked' };
}

/**
 * Changes the document mode, the budget or the personal-data grant of an active token, by name;
 * each takes effect from the next request on. Only what is given changes; `costPerMinute: null`
 * returns to the default.
 */
export async function updateInternalToken(
  db: Queryable,
  name: string,
  changes: { documents?: DocumentMode | undefined; costPerMinute?: number | null | undefined; personalData?: boolean | undefined; integrations?: boolean | undefined },
): Promise<{ id: string; name: string; documents: DocumentMode; costPerMinute: number | null; personalData: boolean; integrations: boolean }> {
  if (changes.documents === undefined && changes.costPerMinute === undefined && changes.personalData === undefined && changes.integrations === undefined) {
    throw new InputError('Give --documents, --cost-per-minute, --personal-data, --no-personal-data, --integrations or --no-integrations');
  }
  const updated = await db.query<{ id: string; name: string; documents: DocumentMode; cost_per_minute: number | null; personal_data: boolean; integrations: boolean }>(
    `UPDATE internal_tokens SET documents = coalesce($2, documents), cost_per_minute = CASE WHEN $3 THEN $4::integer ELSE cost_per_minute END,
        personal_data = coalesce($5, personal_data), integrations = coalesce($6, integrations)
      WHERE name = $1 AND revoked_at IS NULL RETURNING id, name, documents, cost_per_minute, personal_data, integrations`,
    [name, changes.documents ?? null, changes.costPerMinute !== undefined, changes.costPerMinute ?? null, changes.personalData ?? null, changes.integrations ?? null],
  );
  const row = updated.rows[0];
  if (!row) throw new InputError(`No active internal token named ${JSON.stringify(name)}`);
  return { id: row.id, name: row.name, documents: row.documents, costPerMinute: row.cost_per_minute, personalData: row.personal_data, integrations: row.integrations };
}

/** The active token with this hash, or null. Not cached: a revoked token is refused at once. */
export async function findActiveInternalToken(db: Queryable, tokenHash: Buffer): Promise<InternalPrincipal | null> {
  const found = await db.query<{ id: string; name: string; workspaces: string[] | null; documents: DocumentMode; cost_per_minute: number | null; personal_data: boolean; integrations: boolean }>(
    'SELECT id, name, workspaces, documents, cost_per_minute, personal_data, integrations FROM internal_tokens WHERE token_hash = $1 AND revoked_at IS NULL',
    [tokenHash],
  );
  const row = found.rows[0];
  return row
    ? { id: row.id, name: row.name, workspaces: row.workspaces, documents: row.documents, costPerMinute: row.cost_per_minute, personalData: row.personal_data, integrations: row.integrations }
    : null;
}
