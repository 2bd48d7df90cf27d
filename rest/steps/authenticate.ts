import type { Authenticator } from '../../src/auth/authenticator.ts';
import { isApiError } from '../../src/errors.ts';
import { addressKey } from '../../src/rate-limit/client-address.ts';
import type { Step } from '../pipeline/compose.ts';
import type { RequestState } from '../pipeline/request-state.ts';

const AUTHORIZATION = 'authorization';

/**
 * The Authorization headers as sent: Node keeps only the first of repeated ones, and a repeated
 * header is refused like an invalid key (docs/contract-rules.md, auth.bearer). Only names of the
 * right length are compared, so that a request's other headers cost no lower-cased copy.
 */
function authorizationHeader(rawHeaders: readonly string[]): string | string[] | undefined {
  let found: string | string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== AUTHORIZATION.length || name.toLowerCase() !== AUTHORIZATION) continue;
    const value = rawHeaders[i + 1]!;
    found = found === undefined ? value : typeof found === 'string' ? [found, value] : [...found, value];
  }
  return found;
}

/**
 * The request's one valid, active key; 401 for anything else. Failed attempts are limited per
 * client address, separately from the per-key limit (docs/contract-rules.md, limits.auth-failures);
 * the address is worked out only for a failure. A key verified in this process within the key
 * cache's time is taken at once.
 */
export function authenticate(authenticator: Pick<Authenticator, 'verified' | 'authenticate'>): Step {
  const refused = (state: RequestState) => (error: unknown) => {
    if (isApiError(error) && error.code === 'rate_limit_exceeded') state.limiter = 'authentication';
    throw error;
  };
  return (state) => {
    const header = authorizationHeader(state.req.rawHeaders);
    const verified = authenticator.verified(header);
    if (verified) {
      state.apiKey = verified;
      return;
    }
    return authenticator.authenticate(header, () => addressKey(state.req.ip)).then((apiKey) => {
      state.apiKey = apiKey;
    }, refused(state));
  };
}
