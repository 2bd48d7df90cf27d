import { createHash, randomBytes, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const API_KEY_PREFIX = 'svc_api_';
export const FEED_TOKEN_PREFIX = 'svc_cal_';
export const INTERNAL_TOKEN_PREFIX = 'svc_int_';
/** A longer Authorization value is refused before any database work (docs/contract-rules.md, auth.max-length). */
export const MAX_API_KEY_LENGTH = 128;

const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const API_KEY_PATTERN = /^svc_api_[0-9A-Za-z]{38}$/;
const FEED_TOKEN_PATTERN = /^svc_cal_[0-9A-Za-z]{32}$/;
const INTERNAL_TOKEN_PATTERN = /^svc_int_[0-9A-Za-z]{38}$/;

function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += BASE62[randomInt(62)];
  return out;
}

function base62Fixed(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i += 1) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62Fixed(crc32(body), CHECKSUM_LENGTH);
}

/**
 * `svc_api_` + 32 random base62 characters + 6 base62 characters of the CRC32 of what precedes
 * them, so that secret scanners can tell a real key from noise offline (docs/contract-rules.md, auth.key-format).
 */
export function generateApiKey(): string {
  const body = API_KEY_PREFIX + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

/** Shape and checksum only; whether the key exists is the store's question. */
export function isWellFormedApiKey(candidate: string): boolean {
  if (!API_KEY_PATTERN.test(candidate)) return false;
  const body = candidate.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === candidate.slice(-CHECKSUM_LENGTH);
}

/** `svc_int_` + 32 random base62 characters + a 6-character CRC32 checksum, like an API key. */
export function generateInternalToken(): string {
  const body = INTERNAL_TOKEN_PREFIX + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

export function isWellFormedInternalToken(candidate: string): boolean {
  if (!INTERNAL_TOKEN_PATTERN.test(candidate)) return false;
  return checksum(candidate.slice(0, -CHECKSUM_LENGTH)) === candidate.slice(-CHECKSUM_LENGTH);
}

export function generateFeedToken(): string {
  return FEED_TOKEN_PREFIX + randomBase62(RANDOM_LENGTH);
}

export function isWellFormedFeedToken(candidate: string): boolean {
  return FEED_TOKEN_PATTERN.test(candidate);
}

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks secret format). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
