import type { Database } from '../db/database.ts';
import type { JoinedResource } from '../db/sql-builder.ts';
import { ApiError } from '../errors.ts';
import type { FailureGuard } from '../rate-limit/failure-guard.ts';
import { findActiveApiKey, recordApiKeyUse, type ActiveApiKey } from './api-key-store.ts';
import { MAX_API_KEY_LENGTH, isWellFormedApiKey, sha256 } from './secret-format.ts';

export type { ActiveApiKey };

export interface AuthenticatorOptions {
  /**
   * How long a looked-up key is trusted without asking the database again. Revocation and
   * rotation must reach every instance within 1 s (docs/contract-rules.md, auth.revocation), so this stays below that.
   */
  cacheTtlMs: number;
  /** How often collected last-used times are written (one statement for all keys). */
  lastUsedFlushMs?: number;
  /**
   * How the data layer reads a workspace row: a key's workspace is then read with the key and
   * trusted for as long as the key (the same bound of at most 1 s).
   */
  workspace?: JoinedResource;
  /** The per-address failure limit, consulted before a key is looked up; none = no limit. */
  guard?: FailureGuard;
}

/** How many looked-up keys, and how many unknown key hashes, one process remembers. */
const MAX_CACHED = 10_000;

const BEARER = /^bearer +(\S+)$/i;

/** RFC 6750: a missing credential gets a bare challenge, a bad one names the error. */
export function invalidApiKey(missing: boolean): ApiError {
  return new ApiError('invalid_api_key', missing ? 'The Authorization header is missing.' : undefined, {
    headers: { 'WWW-Authenticate': missing ? 'Bearer' : 'Bearer error="invalid_token"' },
  });
}

interface CacheEntry {
  key: ActiveApiKey;
  expiresAt: number;
}

/** Insertion-ordered maps forget their oldest entry first when full. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  if (map.size >= MAX_CACHED) map.delete(map.keys().next().value!);
  map.set(key, value);
}

export function tooManyFailures(decision: { resetSeconds: number }): ApiError {
  return new ApiError('rate_limit_exceeded', 'Too many failed authentications from this address; wait for the time given in Retry-After.', {
    headers: { 'Retry-After': String(Math.max(1, decision.resetSeconds)) },
  });
}

/** The SHA-256 (hex) of a well-formed bearer key, or null for anything else. */
function hashOfBearer(header: string): string | null {
  const candidate = BEARER.exec(header)?.[1];
  if (!candidate || candidate.length > MAX_API_KEY_LENGTH || !isWellFormedApiKey(candidate)) return null;
  return sha256(candidate).toString('hex');
}

export class Authenticator {
  readonly #db: Database;
  readonly #ttl: number;
  readonly #workspace: JoinedResource | undefined;
  readonly #guard: FailureGuard | undefined;
  readonly #cache = new Map<string, CacheEntry>();
  /**
   * Unknown key hashes, for as long as a found key is trusted (at most 1 s): a key created just
   * after a failed lookup works as soon as a revoked one stops working (docs/contract-rules.md,
   * `auth.revocation`).
   */
  readonly #unknown = new Map<string, number>();
  readonly #pending = new Map<string, Promise<ActiveApiKey | null>>();
  readonly #uses = new Map<string, Date>();
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(db: Database, options: AuthenticatorOptions) {
    this.#db = db;
    this.#ttl = options.cacheTtlMs;
    this.#workspace = options.workspace;
    this.#guard = options.guard;
    const flushMs = options.lastUsedFlushMs ?? 5_000;
    if (flushMs > 0) {
      this.#timer = setInterval(() => void this.flush().catch(() => {}), flushMs);
      this.#timer.unref();
    }
  }

  /**
   * The key named by an Authorization header value (or values, when repeated), or an
   * `invalid_api_key` error. Malformed and over-long values are refused before any database work;
   * so is every value from an `address` over its failure limit (`rate_limit_exceeded`), unless
   * its key is known to be valid.
   */
  async authenticate(header: string | readonly string[] | undefined, address = 'unknown'): Promise<ActiveApiKey> {
    const missing = header === undefined || header === '';
    const hash = missing || typeof header !== 'string' ? null : hashOfBearer(header);
    const cached = hash === null ? undefined : this.#cache.get(hash);
    let key: ActiveApiKey | null = cached && cached.expiresAt > Date.now() ? cached.key : null;
    if (!key) {
      const find = () => this.#lookup(hash!);
      const result = this.#guard ? await this.#guard.lookup(address, hash, find) : { found: hash === null ? null : await find(), limited: null };
      if (result.found === null && result.limited) throw tooManyFailures(result.limited);
      key = result.found;
    }
    if (!key) throw invalidApiKey(missing);
    this.#uses.set(key.id, new Date());
    return key;
  }

  async #lookup(hash: string): Promise<ActiveApiKey | null> {
    const now = Date.now();
    const unknownUntil = this.#unknown.get(hash);
    if (unknownUntil !== undefined) {
      if (unknownUntil > now) return null;
      this.#unknown.delete(hash);
    }
    // Concurrent requests with the same key share one lookup.
    let pending = this.#pending.get(hash);
    if (!pending) {
      pending = findActiveApiKey(this.#db, Buffer.from(hash, 'hex'), this.#workspace).finally(() => this.#pending.delete(hash));
      this.#pending.set(hash, pending);
    }
    const key = await pending;
    if (this.#ttl > 0) {
      if (key) remember(this.#cache, hash, { key, expiresAt: now + this.#ttl });
      else remember(this.#unknown, hash, now + this.#ttl);
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
