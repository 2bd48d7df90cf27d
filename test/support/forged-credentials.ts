import { randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * Credentials as anyone can make them from the published formats alone: the right prefix, the
 * right length, base62 and (for keys) a correct CRC32 suffix, without anything only the service
 * knows. They are what a guesser or a scanner's false positive sends.
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const randomBase62 = (length: number) => Array.from({ length }, () => BASE62[randomInt(62)]).join('');

function crcSuffix(body: string): string {
  let rest = crc32(body);
  let out = '';
  for (let i = 0; i < 6; i += 1) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/** `svc_api_` + 32 base62 + the CRC32 of what precedes it: well formed, never issued. */
export function forgedApiKey(): string {
  const body = `svc_api_${randomBase62(32)}`;
  return body + crcSuffix(body);
}

/** `svc_cal_` + 32 base62: well formed, never issued. */
export function guessedFeedToken(): string {
  return `svc_cal_${randomBase62(32)}`;
}
