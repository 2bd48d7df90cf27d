import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const API_KEY_PREFIX = 'svc_api_';
export const FEED_TOKEN_PREFIX = 'svc_cal_';
export const INTERNAL_TOKEN_PREFIX = 'svc_int_';
/** The integrations page's single-use link secret, and the session token opening it gives. */
export const PORTAL_LINK_PREFIX = 'svc_pl_';
export const PORTAL_SESSION_PREFIX = 'svc_ps_';
/** A longer Authorization value is refused before any database work (docs/contract-rules.md, auth.max-length). */
export const MAX_API_KEY_LENGTH = 128;

const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
/** Of the 32 characters after the prefix, 22 are random (131 bits) and 10 are the issuer tag (59 bits). */
const TAGGED_RANDOM_LENGTH = 22;
const TAG_LENGTH = 10;
const API_KEY_PATTERN = /^svc_api_[0-9A-Za-z]{38}$/;
const FEED_TOKEN_PATTERN = /^svc_cal_[0-9A-Za-z]{32}$/;
const INTERNAL_TOKEN_PATTERN = /^svc_int_[0-9A-Za-z]{38}$/;
const PORTAL_PATTERNS = { [PORTAL_LINK_PREFIX]: /^svc_pl_[0-9A-Za-z]{38}$/, [PORTAL_SESSION_PREFIX]: /^svc_ps_[0-9A-Za-z]{38}$/ } as const;

function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += BASE62[randomInt(62)];
  return out;
}

function base62Fixed(value: bigint, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i += 1) {
    out = BASE62[Number(rest % 62n)] + out;
    rest /= 62n;
  }
  return out;
}

function checksum(body: string): string {
  return base62Fixed(BigInt(crc32(body)), CHECKSUM_LENGTH);
}

/**
 * The issuer tag: an HMAC-SHA256, under the service's issuer key, of a credential's prefix and
 * random part, as 10 base62 characters. Unlike the CRC32 suffix, which anyone can compute, only
 * the service can make it, so a credential without it is refused without a lookup
 * (docs/authentication-and-scopes.md).
 */
export class IssuerTag {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length < 32) throw new Error('An issuer key has at least 32 bytes');
    this.#key = key;
  }

  /** The tag of `head` (prefix and random part). */
  of(head: string): string {
    return base62Fixed(createHmac('sha256', this.#key).update(head).digest().readBigUInt64BE(0), TAG_LENGTH);
  }

  /** Whether `head + tag` (the first `head.length + 10` characters of a credential) carry this issuer's tag. */
  carries(credential: string, headLength: number): boolean {
    const tag = credential.slice(headLength, headLength + TAG_LENGTH);
    return tag.length === TAG_LENGTH && timingSafeEqual(Buffer.from(this.of(credential.slice(0, headLength))), Buffer.from(tag));
  }
}

const TAGGED_HEAD_LENGTH = API_KEY_PREFIX.length + TAGGED_RANDOM_LENGTH;

/**
 * `svc_api_` + 32 base62 characters (22 random, then the issuer tag of what precedes it) + 6 base62
 * characters of the CRC32 of everything before them, so that secret scanners can tell a real key
 * from noise offline (docs/contract-rules.md, auth.key-format).
 */
export function generateApiKey(issuer: IssuerTag): string {
  const head = API_KEY_PREFIX + randomBase62(TAGGED_RANDOM_LENGTH);
  const body = head + issuer.of(head);
  return body + checksum(body);
}

/** Shape and checksum only; whether the key was issued is the issuer tag's question, whether it exists the store's. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!API_KEY_PATTERN.test(candidate)) return false;
  const body = candidate.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === candidate.slice(-CHECKSUM_LENGTH);
}

/** `svc_cal_` + 32 base62 characters: 22 random, then the issuer tag of what precedes them (docs/contract-rules.md, calendar.token). */
export function generateFeedToken(issuer: IssuerTag): string {
  const head = FEED_TOKEN_PREFIX + randomBase62(TAGGED_RANDOM_LENGTH);
  return head + issuer.of(head);
}

export function isWellFormedFeedToken(candidate: string): boolean {
  return FEED_TOKEN_PATTERN.test(candidate);
}

/** Whether a well-formed API key or feed token carries `issuer`'s tag. */
export function isIssuedBy(issuer: IssuerTag, credential: string): boolean {
  return issuer.carries(credential, TAGGED_HEAD_LENGTH);
}

/** `svc_int_` + 32 random base62 characters + a 6-character CRC32 checksum. */
export function generateInternalToken(): string {
  const body = INTERNAL_TOKEN_PREFIX + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

export function isWellFormedInternalToken(candidate: string): boolean {
  if (!INTERNAL_TOKEN_PATTERN.test(candidate)) return false;
  return checksum(candidate.slice(0, -CHECKSUM_LENGTH)) === candidate.slice(-CHECKSUM_LENGTH);
}

type PortalPrefix = typeof PORTAL_LINK_PREFIX | typeof PORTAL_SESSION_PREFIX;

/** A portal link's secret or session token: the prefix + 32 random base62 characters + a 6-character CRC32 checksum. */
export function generatePortalSecret(prefix: PortalPrefix): string {
  const body = prefix + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

/** Shape and checksum of a portal link's secret or session token: what is not is refused without a lookup. */
export function isWellFormedPortalSecret(prefix: PortalPrefix, candidate: string): boolean {
  if (!PORTAL_PATTERNS[prefix].test(candidate)) return false;
  return checksum(candidate.slice(0, -CHECKSUM_LENGTH)) === candidate.slice(-CHECKSUM_LENGTH);
}

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks secret format). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
