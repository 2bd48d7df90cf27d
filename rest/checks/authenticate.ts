import type { Request, Response } from 'express';
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
 * The request's one valid, active key; 401 for anything else. Failed attempts are limited per
 * client address, separately from the per-key limit (docs/contract-rules.md, limits.auth-failures).
 */
export async function authenticateRequest(authenticator: Authenticator, req: Request, res: Response): Promise<ActiveApiKey> {
  try {
    const apiKey = await authenticator.authenticate(authorizationHeader(req.rawHeaders), addressKey(req.ip));
    res.locals.apiKey = apiKey;
    return apiKey;
  } catch (error) {
    if (isApiError(error) && error.code === 'rate_limit_exceeded') res.locals.limiter = 'authentication';
    throw error;
  }
}
