import type { Scope } from '../../src/auth/scopes.ts';
import { ApiError } from '../../src/errors.ts';
import type { Step } from '../pipeline/compose.ts';

/** 403 when the request's key lacks the endpoint's scope. Runs after authentication, which found the key. */
export function requireScope(scope: Scope): Step {
  const challenge = { headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` } };
  return (state) => {
    if (state.key.scopes.has(scope)) return;
    throw new ApiError('missing_scope', `This endpoint requires the scope ${scope}.`, challenge);
  };
}
