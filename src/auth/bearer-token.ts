import { timingSafeEqual } from 'node:crypto';
import { sha256 } from './secret-format.ts';

const BEARER = /^bearer +(\S+)$/i;

/**
 * Whether an Authorization header value carries one of `tokens` as its bearer token. Digests are
 * compared, so that the comparison takes the same time whatever the lengths.
 */
export function hasBearerToken(header: string | undefined, tokens: ReadonlyArray<string | undefined>): boolean {
  const presented = BEARER.exec(header ?? '')?.[1];
  if (!presented) return false;
  const digest = sha256(presented);
  let matched = false;
  for (const token of tokens) if (token && timingSafeEqual(digest, sha256(token))) matched = true;
  return matched;
}
