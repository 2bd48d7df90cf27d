import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  MAX_API_KEY_LENGTH,
  generateApiKey,
  generateFeedToken,
  generateWebhookSecret,
  isIssuedBy,
  isWellFormedApiKey,
  isWellFormedFeedToken,
  IssuerTag,
} from '../../src/auth/secret-format.ts';
import { forgedApiKey, guessedFeedToken } from '../support/forged-credentials.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const issuer = new IssuerTag(randomBytes(32));
const issueKey = () => generateApiKey(issuer);

describe('auth.key-format: an API key is svc_api_ + 22 random base62 characters + a 10-character issuer tag + a 6-character base62 CRC32 checksum', () => {
  it('is svc_api_ + 32 base62 characters + 6 base62 characters of a CRC32 of what precedes them', () => {
    for (let i = 0; i < 200; i += 1) {
      const key = issueKey();
      expect(key).toMatch(/^svc_api_[0-9A-Za-z]{38}$/);
      const value = [...key.slice(-6)].reduce((sum, char) => sum * 62 + BASE62.indexOf(char), 0);
      expect(value).toBe(crc32(key.slice(0, -6)));
      expect(isWellFormedApiKey(key)).toBe(true);
    }
  });

  it('keys are random: 1,000 keys are all different', () => {
    expect(new Set(Array.from({ length: 1000 }, issueKey)).size).toBe(1000);
  });

  it('a key with one character changed fails the checksum', () => {
    const key = issueKey();
    for (const position of [8, 20, 39, 41, 45]) {
      const char = key[position] === 'a' ? 'b' : 'a';
      expect(isWellFormedApiKey(key.slice(0, position) + char + key.slice(position + 1))).toBe(false);
    }
  });

  it('carries the tag of its issuer: no other issuer key, no key made from the format alone, no key with a character changed', () => {
    const other = new IssuerTag(randomBytes(32));
    for (let i = 0; i < 200; i += 1) {
      const key = issueKey();
      expect(isIssuedBy(issuer, key)).toBe(true);
      expect(isIssuedBy(other, key)).toBe(false);
      expect(isIssuedBy(issuer, forgedApiKey())).toBe(false);
    }
    const key = issueKey();
    for (let position = 8; position < 40; position += 1) {
      const char = key[position] === 'a' ? 'b' : 'a';
      expect(isIssuedBy(issuer, key.slice(0, position) + char + key.slice(position + 1))).toBe(false);
    }
  });

  it('refuses other prefixes, lengths and alphabets', () => {
    const key = issueKey();
    expect(isWellFormedApiKey(key.replace('svc_api_', 'svc_cal_'))).toBe(false);
    expect(isWellFormedApiKey(`${key}0`)).toBe(false);
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey(`${key.slice(0, 20)}-${key.slice(21)}`)).toBe(false);
    expect(isWellFormedApiKey('')).toBe(false);
  });
});

describe('API key length', () => {
  it('auth.max-length: the maximum accepted length is 128 characters', () => {
    expect(MAX_API_KEY_LENGTH).toBe(128);
  });
});

describe('feed tokens and webhook secrets', () => {
  it('calendar.token: a feed token is svc_cal_ + 32 base62 characters, the last 10 its issuer tag', () => {
    const token = generateFeedToken(issuer);
    expect(token).toMatch(/^svc_cal_[0-9A-Za-z]{32}$/);
    expect(isWellFormedFeedToken(token)).toBe(true);
    expect(isWellFormedFeedToken(`${token}x`)).toBe(false);
    expect(isIssuedBy(issuer, token)).toBe(true);
    expect(isIssuedBy(issuer, guessedFeedToken())).toBe(false);
    // The tag covers the prefix: a key's random part and tag do not make a feed token.
    expect(isIssuedBy(issuer, `svc_cal_${issueKey().slice(8, 40)}`)).toBe(false);
  });

  it('webhooks.secret: a webhook secret is whsec_ + base64 of 32 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
  });
});
