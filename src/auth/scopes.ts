export const SCOPES = ['courses:read', 'bookings:read', 'participants:read'] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * Parses a comma-separated scope list: known scopes only, no duplicates, and participants:read
 * only together with bookings:read (docs/contract-rules.md, auth.scope-dependency). Returns them in canonical order.
 */
export function parseScopes(input: string | readonly string[]): Scope[] {
  const items = (typeof input === 'string' ? input.split(',') : [...input]).map((item) => item.trim());
  if (items.length === 0 || items.every((item) => item === '')) throw new Error('At least one scope is required');
  const unknown = items.filter((item) => !isScope(item));
  if (unknown.length > 0) {
    throw new Error(`Unknown scope ${unknown.map((item) => JSON.stringify(item)).join(', ')}; valid scopes: ${SCOPES.join(', ')}`);
  }
  const scopes = new Set(items as Scope[]);
  if (scopes.has('participants:read') && !scopes.has('bookings:read')) {
    throw new Error('participants:read cannot be granted without bookings:read');
  }
  return SCOPES.filter((scope) => scopes.has(scope));
}
