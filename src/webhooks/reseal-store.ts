import type { Database } from '../db/database.ts';
import { InputError } from '../input-error.ts';
import type { Logger } from '../logger.ts';
import { SealedSecretError, type SecretBox } from './secret-box.ts';

export interface ResealResult {
  /** Secrets sealed again under the newest key. */
  resealed: number;
  /** Secrets that were already sealed under it. */
  current: number;
}

interface SealedRow {
  id: string;
  secret_ciphertext: Buffer;
  previous_secret_ciphertext: Buffer | null;
}

/** A sealed secret opened for its endpoint: bound to it, or written before binding existed. */
function openForReseal(box: SecretBox, sealed: Buffer, endpointId: string): { secret: string; unbound: boolean } {
  try {
    return { secret: box.open(sealed, endpointId), unbound: false };
  } catch (error) {
    const unbound = box.openUnbound(sealed);
    if (unbound === null) throw error;
    return { secret: unbound, unbound: true };
  }
}

/** Seals a row's secrets again, unless another process changed them meanwhile; whether it did. */
async function writeResealed(db: Database, box: SecretBox, row: SealedRow, secrets: string[]): Promise<boolean> {
  const fresh = secrets.map((secret) => box.seal(secret, row.id));
  const updated = await db.query(
    `UPDATE webhook_endpoints SET secret_ciphertext = $2, previous_secret_ciphertext = CASE WHEN previous_secret_ciphertext IS NULL THEN NULL ELSE $3::bytea END
      WHERE id = $1 AND secret_ciphertext = $4 AND previous_secret_ciphertext IS NOT DISTINCT FROM $5`,
    [row.id, fresh[0], fresh[1] ?? null, row.secret_ciphertext, row.previous_secret_ciphertext],
  );
  return (updated.rowCount ?? 0) > 0;
}

const sealedRows = async (db: Database) =>
  (await db.query<SealedRow>('SELECT id, secret_ciphertext, previous_secret_ciphertext FROM webhook_endpoints WHERE removed_at IS NULL ORDER BY id')).rows;

/** Rows with a sealed secret that names none of `keyIds`: written before key ids, or under a retired key. */
const rowsNotNaming = async (db: Database, keyIds: Buffer[]) =>
  (
    await db.query<SealedRow>(
      `SELECT id, secret_ciphertext, previous_secret_ciphertext FROM webhook_endpoints
        WHERE removed_at IS NULL
          AND (get_byte(secret_ciphertext, 0) <> 2 OR substring(secret_ciphertext FROM 2 FOR 8) <> ALL ($1::bytea[])
               OR get_byte(previous_secret_ciphertext, 0) <> 2 OR substring(previous_secret_ciphertext FROM 2 FOR 8) <> ALL ($1::bytea[]))
        ORDER BY id`,
      [keyIds],
    )
  ).rows;

const sealedOf = (row: SealedRow) => [row.secret_ciphertext, row.previous_secret_ciphertext].filter((candidate) => candidate !== null);

/**
 * `webhook reseal`: seals every endpoint secret (and a previous secret still in its overlap) under
 * the newest key of WEBHOOK_SECRET_KEY, bound to its endpoint; older keys can then be retired.
 * Secrets no configured key opens are left as they are and named in the error.
 */
export async function resealSecrets(db: Database, box: SecretBox): Promise<ResealResult> {
  const result: ResealResult = { resealed: 0, current: 0 };
  const unreadable: string[] = [];
  for (const row of await sealedRows(db)) {
    const sealed = sealedOf(row);
    let secrets: string[];
    try {
      secrets = sealed.map((candidate) => openForReseal(box, candidate, row.id).secret);
    } catch (error) {
      if (!(error instanceof SealedSecretError)) throw error;
      unreadable.push(row.id);
      continue;
    }
    if (sealed.every((candidate) => box.isCurrent(candidate))) {
      result.current += 1;
      continue;
    }
    if (await writeResealed(db, box, row, secrets)) result.resealed += 1;
  }
  if (unreadable.length > 0) {
    throw new InputError(
      `Resealed ${result.resealed} and left ${result.current} already current, but no key in WEBHOOK_SECRET_KEY opens the secret of ${unreadable.join(', ')} (sealed under a key no longer listed, altered, or moved from another endpoint)`,
    );
  }
  return result;
}

/**
 * Secrets sealed before they were bound to their endpoint, sealed again bound to the endpoint they
 * are on now, so that from then on no sealed secret opens on another endpoint. Run at the start of
 * every process that delivers or manages webhooks; says how many endpoints it resealed.
 */
export async function bindUnboundSecrets(db: Database, box: SecretBox, logger: Logger): Promise<number> {
  let bound = 0;
  for (const row of await rowsNotNaming(db, box.keyIds)) {
    const opened: Array<{ secret: string; unbound: boolean }> = [];
    for (const sealed of sealedOf(row)) {
      try {
        opened.push(openForReseal(box, sealed, row.id));
      } catch (error) {
        // Unreadable secrets are the deliverer's and `webhook reseal`'s to report.
        if (!(error instanceof SealedSecretError)) throw error;
      }
    }
    if (opened.length !== sealedOf(row).length || !opened.some((secret) => secret.unbound)) continue;
    if (await writeResealed(db, box, row, opened.map((secret) => secret.secret))) bound += 1;
  }
  if (bound > 0) logger.info({ endpoints: bound }, 'webhook signing secrets sealed before endpoint binding were resealed, bound to their endpoint');
  return bound;
}
