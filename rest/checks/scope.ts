import type { Scope } from '../../src/auth/scopes.ts';
import { ApiError } from '../../src/errors.ts';
import type { ActiveApiKey } from '../../src/auth/authenticator.ts';

/** 403 when the key lacks the endpoint's scope. */
export function assertScope(apiKey: ActiveApiKey, scope: Scope): void {
  if (apiKey.scopes.has(scope)) return;
  throw new ApiError('missing_scope', `This endpoint requires the scope ${scope}.`, {
    headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
  });
}
