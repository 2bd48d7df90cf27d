import type { Queryable } from '../db/database.ts';
import { InputError } from '../input-error.ts';
import type { TrustedDocument } from './trusted-documents.ts';

export interface RegisteredDocumentSummary {
  /** `sha256:<hash>`: what a client sends as `documentId`. */
  id: string;
  operationNames: string[];
  addedAt: string;
}

/** The id of the active token with this name; an operator's typo is an error naming the name. */
async function activeTokenId(db: Queryable, name: string): Promise<string> {
  const found = await db.query<{ id: string }>('SELECT id FROM internal_tokens WHERE name = $1 AND revoked_at IS NULL', [name]);
  const id = found.rows[0]?.id;
  if (!id) throw new InputError(`No active internal token named ${JSON.stringify(name)}`);
  return id;
}

/** Registers documents for a token in one statement; those already registered stay as they are. */
export async function addDocuments(db: Queryable, tokenName: string, documents: readonly TrustedDocument[]): Promise<{ added: number; alreadyRegistered: number }> {
  const tokenId = await activeTokenId(db, tokenName);
  const inserted = await db.query(
    `INSERT INTO internal_token_documents (token_id, hash, body, operation_names)
     SELECT $1, d.hash, d.body, ARRAY(SELECT jsonb_array_elements_text(d.names))
       FROM jsonb_to_recordset($2::jsonb) AS d(hash text, body text, names jsonb)
     ON CONFLICT (token_id, hash) DO NOTHING`,
    [tokenId, JSON.stringify(documents.map((document) => ({ hash: document.hash, body: document.body, names: document.operationNames })))],
  );
  const added = inserted.rowCount ?? 0;
  return { added, alreadyRegistered: documents.length - added };
}

export async function listDocuments(db: Queryable, tokenName: string): Promise<RegisteredDocumentSummary[]> {
  const tokenId = await activeTokenId(db, tokenName);
  const found = await db.query<{ hash: string; operation_names: string[]; added_at: Date }>(
    'SELECT hash, operation_names, added_at FROM internal_token_documents WHERE token_id = $1 ORDER BY added_at, hash',
    [tokenId],
  );
  return found.rows.map((row) => ({ id: `sha256:${row.hash}`, operationNames: row.operation_names, addedAt: row.added_at.toISOString() }));
}

/** Removes some documents of a token (by hash), or all of them; refused from the next request on. */
export async function removeDocuments(db: Queryable, tokenName: string, which: { hashes: readonly string[] } | 'all'): Promise<{ removed: number }> {
  const tokenId = await activeTokenId(db, tokenName);
  if (which === 'all') {
    const deleted = await db.query('DELETE FROM internal_token_documents WHERE token_id = $1', [tokenId]);
    return { removed: deleted.rowCount ?? 0 };
  }
  // Checked first, so that a mistyped hash removes nothing at all.
  const found = await db.query<{ hash: string }>('SELECT hash FROM internal_token_documents WHERE token_id = $1 AND hash = ANY($2)', [tokenId, which.hashes]);
  const known = new Set(found.rows.map((row) => row.hash));
  const missing = which.hashes.find((hash) => !known.has(hash));
  if (missing !== undefined) throw new InputError(`No document sha256:${missing} is registered for ${JSON.stringify(tokenName)}; nothing was removed`);
  const deleted = await db.query('DELETE FROM internal_token_documents WHERE token_id = $1 AND hash = ANY($2)', [tokenId, which.hashes]);
  return { removed: deleted.rowCount ?? 0 };
}

/** The text of the document registered for the token under this hash, or null. Not cached: a removal applies at once. */
export async function findRegisteredDocument(db: Queryable, tokenId: string, hash: string): Promise<string | null> {
  const found = await db.query<{ body: string }>('SELECT body FROM internal_token_documents WHERE token_id = $1 AND hash = $2', [tokenId, hash]);
  return found.rows[0]?.body ?? null;
}
