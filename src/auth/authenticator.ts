import type { Database } from '../db/database.ts';
import type { ResourceDefinition } from '../db/resource.ts';
import { ApiError } from '../errors.ts';
import { findActiveApiKey, recordApiKeyUse, type ActiveApiKey } from './api-key-store.ts';
import { MAX_API_KEY_LENGTH, isWellFormedApiKey, sha256 } from './secret-format.ts';

export type { ActiveApiKey };

export interface AuthenticatorOptions {
  /**
   * How long a looked-up key is trusted without asking the database again. Revocation and
   * rotation must reach every instance within 1 s (decisions.md), so this stays below that.
   */
  cacheTtlMs: number;
  /** How often collected last-used times are written (one statement for all keys). */
  lastUsedFlushMs?: number;
  /**
   * The registry's workspace resource: a key's workspace row is then read with the key and
   * trusted for as long as the key (the same bound of at most 1 s).
   */
  workspace?: ResourceDefinition;
}

const BEARER = /^bearer +(\S+)$/i;

/** RFC 6750: a missing credential gets a bare challenge, a bad one names the error. */
export function invalidApiKey(missing: boolean): ApiError {
  return new ApiError('invalid_api_key', missing ? 'The Authorization header is missing.' : undefined, {
    headers: { 'WWW-Authenticate': missing ? 'Bearer' : 'Bearer error="invalid_token"' },
  });
}

interface CacheEntry {
  key: ActiveApiKey | null;
  expiresAt: number;
}

export class Authenticator {
  readonly #db: Database;
  readonly #ttl: number;
  readonly #workspace: ResourceDefinition | undefined;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #pending = new Map<string, Promise<ActiveApiKey | null>>();
  readonly #uses = new Map<string, Date>();
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(db: Database, options: AuthenticatorOptions) {
    this.#db = db;
    this.#ttl = options.cacheTtlMs;
    this.#workspace = options.workspace;
    const flushMs = options.lastUsedFlushMs ?? 5_000;
    if (flushMs > 0) {
      this.#timer = setInterval(() => void this.flush().catch(() => {}), flushMs);
      this.#timer.unref();
    }
  }

  /**
   * The key named by an Authorization header value (or values, when repeated), or an
   * `invalid_api_key` error. Malformed and over-long values are refused before any database work.
   */
  async authenticate(header: string | readonly string[] | undefined): Promise<ActiveApiKey> {
    if (header === undefined || header === '') throw invalidApiKey(true);
    if (typeof header !== 'string') throw invalidApiKey(false);
    const match = BEARER.exec(header);
    const candidate = match?.[1];
    if (!candidate || candidate.length > MAX_API_KEY_LENGTH || !isWellFormedApiKey(candidate)) {
      throw invalidApiKey(false);
    }
    const key = await this.#lookup(sha256(candidate).toString('hex'));
    if (!key) throw invalidApiKey(false);
    this.#uses.set(key.id, new Date());
    return key;
  }

  async #lookup(hash: string): Promise<ActiveApiKey | null> {
    const now = Date.now();
    const cached = this.#cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.key;
    // Concurrent requests with the same key share one lookup.
    let pending = this.#pending.get(hash);
    if (!pending) {
      pending = findActiveApiKey(this.#db, Buffer.from(hash, 'hex'), this.#workspace).finally(() => this.#pending.delete(hash));
      this.#pending.set(hash, pending);
    }
    const key = await pending;
    if (this.#ttl > 0) {
      if (this.#cache.size > 10_000) this.#cache.clear();
      this.#cache.set(hash, { key, expiresAt: now + this.#ttl });
    }
    return key;
  }

  /** Writes the last-used times collected since the previous flush. */
  async flush(): Promise<void> {
    if (this.#uses.size === 0) return;
    const uses = new Map(this.#uses);
    this.#uses.clear();
    await recordApiKeyUse(this.#db, uses);
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.flush().catch(() => {});
  }
}
