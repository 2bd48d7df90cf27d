import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { generateInternalToken, isWellFormedApiKey, isWellFormedInternalToken } from '../../src/auth/secret-format.ts';
import { createRedactor } from '../../src/logger.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('internal token format', () => {
  it('is svc_int_ + 32 base62 characters + 6 base62 characters of a CRC32 of what precedes them', () => {
    for (let i = 0; i < 100; i += 1) {
      const token = generateInternalToken();
      expect(token).toMatch(/^svc_int_[0-9A-Za-z]{38}$/);
      const value = [...token.slice(-6)].reduce((sum, char) => sum * 62 + BASE62.indexOf(char), 0);
      expect(value).toBe(crc32(token.slice(0, -6)));
      expect(isWellFormedInternalToken(token)).toBe(true);
    }
  });

  it('refuses a changed character, other prefixes and lengths; an internal token is no API key', () => {
    const token = generateInternalToken();
    const changed = `${token.slice(0, 20)}${token[20] === 'a' ? 'b' : 'a'}${token.slice(21)}`;
    expect(isWellFormedInternalToken(changed)).toBe(false);
    expect(isWellFormedInternalToken(token.replace('svc_int_', 'svc_api_'))).toBe(false);
    expect(isWellFormedInternalToken(`${token}0`)).toBe(false);
    expect(isWellFormedInternalToken('')).toBe(false);
    expect(isWellFormedApiKey(token)).toBe(false);
  });

  it('is redacted from logged paths like API keys and feed tokens', () => {
    const token = generateInternalToken();
    expect(createRedactor().url(`/graphql?token=${token}`)).toEqual({ path: '/graphql', query: 'token=svc_int_[redacted]' });
    expect(createRedactor().url(`/x/%73vc_INT_${token.slice(8)}`).path).toBe('/x/svc_INT_[redacted]');
  });
});
