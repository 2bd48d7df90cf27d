import { LRUCache } from 'lru-cache';
import type { Database } from '../db/database.ts';
import type { JoinedResource } from '../sql/sql-builder.ts';
import { ApiError } from '../errors.ts';
import { Flights } from '../flights.ts';
import type { FailureGuard } from '../rate-limit/failure-guard.ts';
import { findApiKey, type ActiveApiKey } from './api-key-store.ts';
import type { IssuedCredentials } from './issued-credentials.ts';
import { MAX_API_KEY_LENGTH, isWellFormedApiKey, sha256 } from './secret-format.ts';

export type { ActiveApiKey };

export interface AuthenticatorOptions {
  /** Which credentials are worth a lookup (issued here, not known revoked). */
  issued: IssuedCredentials;
  /** The per-address limit of failed authentications. */
  guard: FailureGuard;
  /**
   * How long a looked-up key is trusted without asking the database again. Revocation and
   * rotation must reach every instance within 1 s (docs/contract-rules.md, auth.revocation), so this stays below that.
   */
  cacheTtlMs: number;
  /**
   * How the data layer reads a workspace row: a key's workspace is then read with the key and
   * trusted for as long as the key (the same bound of at most 1 s).
   */
  workspace?: JoinedResource;
}

/** How many looked-up keys one process remembers. */
const MAX_CACHED = 10_000;

const BEARER = /^bearer +(\S+)$/i;

/**
 * What was wrong with a refused Authorization header, as far as it can be said without a lookup:
 * missing, not in the form `Bearer <key>` (a bare key, another scheme, two values, a repeated
 * header), or a key in that form that is not an active key here. The message helps a caller who
 * wrote the header wrong and says nothing about any key.
 */
type Refusal = 'missing' | 'form' | 'repeated' | 'key';

const REFUSALS: Record<Refusal, string | undefined> = {
  missing: 'The Authorization header is missing.',
  form: 'The Authorization header must read "Bearer <API key>": the word Bearer, one space, then the key.',
  repeated: 'Send one Authorization header, "Bearer <API key>".',
  // The catalogue's own message (src/errors.ts).
  key: undefined,
};

/** RFC 6750: a missing credential gets a bare challenge, a bad one names the error. */
export function invalidApiKey(refusal: Refusal): ApiError {
  return new ApiError('invalid_api_key', REFUSALS[refusal], {
    headers: { 'WWW-Authenticate': refusal === 'missing' ? 'Bearer' : 'Bearer error="invalid_token"' },
  });
}

function refusalOf(header: string | readonly string[] | undefined): Refusal {
  if (header === undefined || header === '') return 'missing';
  if (typeof header !== 'string') return 'repeated';
  return BEARER.test(header) ? 'key' : 'form';
}

/** The key of a one-value `Authorization: Bearer <well-formed key>` header, or null for anything else. */
function bearerKey(header: string): string | null {
  const candidate = BEARER.exec(header)?.[1];
  if (!candidate || candidate.length > MAX_API_KEY_LENGTH || !isWellFormedApiKey(candidate)) return null;
  return candidate;
}

export class Authenticator {
  readonly #issued: IssuedCredentials;
  readonly #guard: FailureGuard;
  /**
   * Keys found active, by the Authorization value that named them, trusted for the cache time
   * (none when it is 0): a key verified in this process within that time is neither parsed, nor
   * checked, nor hashed again.
   */
  readonly #found: LRUCache<string, ActiveApiKey> | null;
  /** Concurrent requests with one key share its lookup. */
  readonly #lookups = new Flights<string, ActiveApiKey | null>();
  readonly #workspace: JoinedResource | undefined;
  readonly #db: Database;

  constructor(db: Database, options: AuthenticatorOptions) {
    this.#db = db;
    this.#issued = options.issued;
    this.#guard = options.guard;
    this.#workspace = options.workspace;
    this.#found = options.cacheTtlMs > 0 ? new LRUCache<string, ActiveApiKey>({ max: MAX_CACHED, ttl: options.cacheTtlMs }) : null;
  }

  /**
   * The key an Authorization value named when it was verified in this process within the cache
   * time and has not expired since, or undefined: then `authenticate` decides. Answered at once,
   * without parsing or hashing.
   */
  verified(header: string | readonly string[] | undefined): ActiveApiKey | undefined {
    if (typeof header !== 'string') return undefined;
    const key = this.#found?.get(header);
    if (key === undefined || key.expiresAt === null || key.expiresAt > Date.now()) return key;
    this.#found!.delete(header);
    return undefined;
  }

  /**
   * The key named by an Authorization header value (or values, when repeated), or an
   * `invalid_api_key` error. A key is looked up only when it may have been issued here (its issuer
   * tag); anything else fails in memory. Every failure counts against the client address (asked of
   * `address` only then), which past its limit gets `rate_limit_exceeded` instead; a valid key is
   * served whatever its address sent.
   */
  async authenticate(header: string | readonly string[] | undefined, address: string | (() => string) = 'unknown'): Promise<ActiveApiKey> {
    const known = this.verified(header);
    if (known) return known;
    const candidate = typeof header === 'string' ? bearerKey(header) : null;
    if (typeof header === 'string' && candidate !== null) {
      const hash = sha256(candidate).toString('hex');
      const key = (await this.#issued.mayBeActive(candidate, hash)) ? (await this.#lookups.share(hash, () => this.#lookup(hash))).value : null;
      if (key) {
        this.#found?.set(header, key);
        return key;
      }
    }
    throw await this.#guard.refuse(typeof address === 'string' ? address : address(), invalidApiKey(refusalOf(header)));
  }

  /** An expired key is refused as a revoked one, and like it for good: nothing extends a key's life. */
  async #lookup(hash: string): Promise<ActiveApiKey | null> {
    const found = await findApiKey(this.#db, Buffer.from(hash, 'hex'), this.#workspace);
    if (found === null || found === 'revoked') {
      await this.#issued.refused(hash, found === 'revoked');
      return null;
    }
    return found;
  }
}
