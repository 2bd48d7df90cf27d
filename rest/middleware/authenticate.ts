import type { RequestHandler } from 'express';
import type { ActiveApiKey, Authenticator } from '../../src/auth/authenticator.ts';
import { isApiError } from '../../src/errors.ts';
import { addressKey } from '../../src/rate-limit/client-address.ts';

export interface AuthenticatedLocals {
  apiKey: ActiveApiKey;
}

/** Counts the Authorization headers as sent: Node keeps only the first of repeated ones. */
function authorizationHeader(rawHeaders: readonly string[]): string | string[] | undefined {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'authorization') values.push(rawHeaders[i + 1]!);
  }
  if (values.length === 0) return undefined;
  return values.length === 1 ? values[0] : values;
}

/**
 * 401 for anything but one valid, active key. Failed attempts are limited per client address,
 * separately from the per-key limit (docs/contract-rules.md, limits.auth-failures).
 */
export function authenticate(authenticator: Authenticator): RequestHandler {
  return async (req, res, next) => {
    try {
      res.locals.apiKey = await authenticator.authenticate(authorizationHeader(req.rawHeaders), addressKey(req.ip));
      next();
    } catch (error) {
      if (isApiError(error) && error.code === 'rate_limit_exceeded') res.locals.limiter = 'authentication';
      next(error);
    }
  };
}
