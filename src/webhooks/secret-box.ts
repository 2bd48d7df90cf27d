import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { InputError } from '../input-error.ts';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** First byte of a sealed secret that names its key: `[0x02][key id, 8 bytes][nonce][tag][ciphertext]`. */
const KEYED_FORMAT = 0x02;
const KEY_ID_BYTES = 8;

/** A key's id: the first 8 bytes of its SHA-256 (it names the key without revealing it). */
const keyIdOf = (key: Buffer) => createHash('sha256').update(key).digest().subarray(0, KEY_ID_BYTES);

/** A sealed secret that none of the configured keys opens for this endpoint. */
export class SealedSecretError extends Error {
  constructor(endpointId: string) {
    super(`The signing secret of webhook endpoint ${endpointId} cannot be opened: it was sealed under a key not listed in WEBHOOK_SECRET_KEY, altered, or moved from another endpoint`);
    this.name = 'SealedSecretError';
  }
}

/**
 * Endpoint secrets are needed in clear to sign, so they cannot be hashed like keys: they are kept
 * encrypted with AES-256-GCM under a key that never enters the database. Each sealed secret names
 * its key (so that keys can be rotated: several may be configured, newest first, and
 * `webhook reseal` moves every secret to the newest) and is bound to its endpoint: the endpoint id
 * is the cipher's additional data, so a sealed secret copied to another endpoint does not open.
 * Secrets sealed before key ids existed (`[nonce][tag][ciphertext]`, no additional data) are bound
 * to nothing: they never open as signing secrets. Each process that delivers or manages webhooks
 * reseals them at its start (`reseal-store.ts`), bound to the endpoint they are found on.
 */
export class SecretBox {
  /** Newest first. */
  readonly #keys: ReadonlyArray<{ id: Buffer; key: Buffer }>;

  constructor(keys: Buffer | readonly Buffer[]) {
    const list = Buffer.isBuffer(keys) ? [keys] : [...keys];
    if (list.length === 0 || list.some((key) => key.length !== 32)) throw new Error('Every webhook secret key must be 32 bytes');
    this.#keys = list.map((key) => ({ id: keyIdOf(key), key }));
  }

  seal(secret: string, endpointId: string): Buffer {
    const { id, key } = this.#keys[0]!;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(Buffer.from(endpointId, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([KEYED_FORMAT]), id, nonce, cipher.getAuthTag(), sealed]);
  }

  open(box: Buffer, endpointId: string): string {
    const keyed = this.#keyedParts(box);
    const entry = keyed && this.#keys.find((candidate) => candidate.id.equals(keyed.keyId));
    const opened = entry ? decrypt(entry.key, keyed.rest, Buffer.from(endpointId, 'utf8')) : null;
    if (opened === null) throw new SealedSecretError(endpointId);
    return opened;
  }

  /**
   * A secret in the format written before key ids, bound to no endpoint, or null: only to seal it
   * again, bound to its endpoint. Tried with every key (the first byte is random, so such a secret
   * may happen to look keyed).
   */
  openUnbound(box: Buffer): string | null {
    for (const { key } of this.#keys) {
      const opened = decrypt(key, box, null);
      if (opened !== null) return opened;
    }
    return null;
  }

  /** The ids of the configured keys, newest first. */
  get keyIds(): Buffer[] {
    return this.#keys.map((entry) => entry.id);
  }

  /** Whether a sealed secret is already in the current format under the newest key. */
  isCurrent(box: Buffer): boolean {
    return this.#keyedParts(box)?.keyId.equals(this.#keys[0]!.id) ?? false;
  }

  #keyedParts(box: Buffer): { keyId: Buffer; rest: Buffer } | null {
    if (box[0] !== KEYED_FORMAT || box.length <= 1 + KEY_ID_BYTES + NONCE_BYTES + TAG_BYTES) return null;
    return { keyId: box.subarray(1, 1 + KEY_ID_BYTES), rest: box.subarray(1 + KEY_ID_BYTES) };
  }
}

/** `[nonce][tag][ciphertext]` opened with `key`, or null when it does not authenticate. */
function decrypt(key: Buffer, box: Buffer, additionalData: Buffer | null): string | null {
  if (box.length <= NONCE_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, box.subarray(0, NONCE_BYTES));
    if (additionalData) decipher.setAAD(additionalData);
    decipher.setAuthTag(box.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(box.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

const KEY_FILE = 'webhook-secret-key';

/**
 * The keys that encrypt endpoint secrets: WEBHOOK_SECRET_KEY (newest first), or on the embedded database one
 * generated into its data directory on first use (beside the database files, like the demo keys).
 * Null when neither is available: endpoints can then be neither added nor delivered to.
 */
export async function resolveSecretBox(config: Config, options: { embeddedDataDir: boolean }): Promise<SecretBox | null> {
  if (config.WEBHOOK_SECRET_KEY) return new SecretBox(config.WEBHOOK_SECRET_KEY.map((key) => Buffer.from(key, 'base64')));
  if (!options.embeddedDataDir || config.DATABASE_URL || config.DATA_DIR.startsWith('memory://')) return null;
  const file = join(config.DATA_DIR, KEY_FILE);
  const saved = await readFile(file, 'utf8').catch(() => null);
  if (saved) return new SecretBox(Buffer.from(saved.trim(), 'base64'));
  // Written whole under a name of its own, then linked into place: two processes starting at once
  // end up with one key, and neither reads a file the other has created but not yet written.
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  await writeFile(draft, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  try {
    await link(draft, file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  } finally {
    await unlink(draft).catch(() => {});
  }
  return new SecretBox(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64'));
}

export async function requireSecretBox(config: Config, options: { embeddedDataDir: boolean }): Promise<SecretBox> {
  const box = await resolveSecretBox(config, options);
  if (!box) throw new InputError('WEBHOOK_SECRET_KEY is not set (base64 of 32 bytes, e.g. `openssl rand -base64 32`): webhook secrets are stored encrypted with it');
  return box;
}
