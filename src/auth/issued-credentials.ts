import { LRUCache } from 'lru-cache';
import type { Queryable } from '../db/database.ts';
import { readIssuerTag, readUntaggedCredentialHashes } from './issuer-key-store.ts';
import { isIssuedBy, type IssuerTag } from './secret-format.ts';

/** How many credentials found revoked or unknown one process remembers. */
const MAX_REFUSED = 10_000;

interface Issuer {
  tag: IssuerTag;
  /** Hashes (hex) of the active credentials issued before tags; none is issued any more. */
  untagged: Set<string>;
}

/**
 * Which well-formed API keys and feed tokens are worth a lookup, decided in memory: those that
 * carry the service's issuer tag, and the untagged ones issued before tags that were active when
 * this process first needed to know. Anything else was never issued and is refused with no
 * database work, so that guessing costs nothing and a valid credential is looked up from any
 * address, whatever else that address sent (docs/authentication-and-scopes.md).
 *
 * Credentials a lookup found revoked are refused in memory from then on (revocation is final);
 * issued ones it did not find at all (not committed yet, or deleted) for `unknownTtlMs`.
 */
export class IssuedCredentials {
  readonly #db: Queryable;
  readonly #unknownTtlMs: number;
  readonly #refused = new LRUCache<string, true>({ max: MAX_REFUSED });
  /** Read on first use (two statements), and again after a failed read: the database may be down at start. */
  #issuer: Promise<Issuer> | null = null;

  constructor(db: Queryable, options: { unknownTtlMs: number }) {
    this.#db = db;
    this.#unknownTtlMs = options.unknownTtlMs;
  }

  /** For a well-formed credential and its SHA-256 (hex): whether it may be active, and so is worth a lookup. */
  async mayBeActive(credential: string, hash: string): Promise<boolean> {
    if (this.#refused.has(hash)) return false;
    const issuer = await this.#load();
    return issuer.untagged.has(hash) || isIssuedBy(issuer.tag, credential);
  }

  /** A lookup did not find the credential active: `revoked` when its row says so, otherwise it has no row. */
  async refused(hash: string, revoked: boolean): Promise<void> {
    // An untagged credential can only ever go away.
    (await this.#load()).untagged.delete(hash);
    if (revoked) this.#refused.set(hash, true);
    else if (this.#unknownTtlMs > 0) this.#refused.set(hash, true, { ttl: this.#unknownTtlMs });
  }

  /** How many credentials issued before tags are still accepted. */
  async untaggedCount(): Promise<number> {
    return (await this.#load()).untagged.size;
  }

  #load(): Promise<Issuer> {
    if (!this.#issuer) {
      const loading = (async () => ({ tag: await readIssuerTag(this.#db), untagged: new Set(await readUntaggedCredentialHashes(this.#db)) }))();
      loading.catch(() => {
        if (this.#issuer === loading) this.#issuer = null;
      });
      this.#issuer = loading;
    }
    return this.#issuer;
  }
}
