import type { RequestHandler } from 'express';
import type { Scope } from '../../src/auth/scopes.ts';
import { ApiError } from '../../src/errors.ts';
import type { AuthenticatedLocals } from './authenticate.ts';

export function requireScope(scope: Scope): RequestHandler {
  return (_req, res, next) => {
    const { apiKey } = res.locals as AuthenticatedLocals;
    if (apiKey.scopes.has(scope)) return next();
    next(
      new ApiError('missing_scope', `This endpoint requires the scope ${scope}.`, {
        headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
      }),
    );
  };
}
