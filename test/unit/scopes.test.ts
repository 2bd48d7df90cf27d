import { describe, expect, it } from 'vitest';
import { parseScopes } from '../../src/auth/scopes.ts';

describe('scope lists', () => {
  it('accepts the three scopes and returns them in canonical order without duplicates', () => {
    expect(parseScopes('participants:read, bookings:read,courses:read,bookings:read')).toEqual([
      'courses:read',
      'bookings:read',
      'participants:read',
    ]);
  });

  it('auth.scope-dependency: participants:read cannot be granted without bookings:read', () => {
    expect(() => parseScopes('participants:read')).toThrow('participants:read cannot be granted without bookings:read');
    expect(() => parseScopes(['courses:read', 'participants:read'])).toThrow(/without bookings:read/);
  });

  it('refuses unknown and empty scopes, naming them', () => {
    expect(() => parseScopes('courses:write')).toThrow('Unknown scope "courses:write"');
    expect(() => parseScopes('')).toThrow('At least one scope is required');
    expect(() => parseScopes('courses:read,,')).toThrow('Unknown scope ""');
  });
});
