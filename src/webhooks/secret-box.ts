import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { InputError } from '../input-error.ts';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Endpoint secrets are needed in clear to sign, so they cannot be hashed like keys: they are kept
 * encrypted with AES-256-GCM under a key that never enters the database.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The webhook secret key must be 32 bytes');
    this.#key = key;
  }

  seal(secret: string): Buffer {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([nonce, cipher.getAuthTag(), sealed]);
  }

  open(box: Buffer): string {
    const decipher = createDecipheriv('aes-256-gcm', this.#key, box.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(box.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(box.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

const KEY_FILE = 'webhook-secret-key';

/**
 * The key that encrypts endpoint secrets: WEBHOOK_SECRET_KEY, or on the embedded database one
 * generated into its data directory on first use (beside the database files, like the demo keys).
 * Null when neither is available: endpoints can then be neither added nor delivered to.
 */
export async function resolveSecretBox(config: Config, options: { embeddedDataDir: boolean }): Promise<SecretBox | null> {
  if (config.WEBHOOK_SECRET_KEY) return new SecretBox(Buffer.from(config.WEBHOOK_SECRET_KEY, 'base64'));
  if (!options.embeddedDataDir || config.DATABASE_URL || config.DATA_DIR.startsWith('memory://')) return null;
  const file = join(config.DATA_DIR, KEY_FILE);
  const saved = await readFile(file, 'utf8').catch(() => null);
  if (saved) return new SecretBox(Buffer.from(saved.trim(), 'base64'));
  const key = randomBytes(32);
  // `wx`: two processes creating it at once must not end up with different keys.
  await writeFile(file, key.toString('base64'), { mode: 0o600, flag: 'wx' }).catch(() => {});
  return new SecretBox(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64'));
}

export async function requireSecretBox(config: Config, options: { embeddedDataDir: boolean }): Promise<SecretBox> {
  const box = await resolveSecretBox(config, options);
  if (!box) throw new InputError('WEBHOOK_SECRET_KEY is not set (base64 of 32 bytes, e.g. `openssl rand -base64 32`): webhook secrets are stored encrypted with it');
  return box;
}
