import type { Queryable } from '../db/database.ts';
import { IssuerTag } from './secret-format.ts';

/** The service's issuer key (src/db/migrations/1763800900000_issuer-tags.sql), as the tag it makes. */
export async function readIssuerTag(db: Queryable): Promise<IssuerTag> {
  const found = await db.query<{ key: Buffer }>('SELECT key FROM credential_issuer_key WHERE id = 1');
  const key = found.rows[0]?.key;
  if (!key) throw new Error('The database has no credential issuer key: run the migrations');
  return new IssuerTag(key);
}

/**
 * The SHA-256 hashes (hex) of the active API keys and feed tokens issued before credentials carried
 * a tag. No untagged credential is issued any more, so the set only shrinks.
 */
export async function readUntaggedCredentialHashes(db: Queryable): Promise<string[]> {
  const found = await db.queryArrays(
    `SELECT encode(key_hash, 'hex') FROM api_keys WHERE NOT tagged AND revoked_at IS NULL
     UNION ALL
     SELECT encode(token_hash, 'hex') FROM feed_tokens WHERE NOT tagged AND revoked_at IS NULL`,
    [],
  );
  return found.map((row) => String(row[0]));
}
