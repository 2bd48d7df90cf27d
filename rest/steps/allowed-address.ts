import { ApiError } from '../../src/errors.ts';
import type { Step } from '../pipeline/compose.ts';

/**
 * 403 `ip_not_allowed` when the request's key has an allow list and the client address is in none
 * of its networks (docs/contract-rules.md, auth.ip-allow-list). The address is the one the
 * service trusts for its limits: the connection's peer, or what `X-Forwarded-For` says through the
 * proxies `TRUST_PROXY` names. Runs after authentication and before the key's rate limit, so that a
 * request from elsewhere neither spends the key's budget nor learns it. A key without a list pays
 * one comparison.
 */
export const allowedAddress: Step = (state) => {
  const allowed = state.key.allowedFrom;
  if (allowed === null || allowed.allows(state.req.ip)) return;
  throw new ApiError('ip_not_allowed');
};
