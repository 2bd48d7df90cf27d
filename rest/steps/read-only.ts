import { ApiError } from '../../src/errors.ts';
import type { Step } from '../pipeline/compose.ts';

const NOT_ALLOWED = { headers: { Allow: 'GET, HEAD' } };

/** GET and HEAD only; anything else is 405 with `Allow`, before authentication (docs/contract-rules.md, http.method-not-allowed). */
export const readOnly: Step = (state) => {
  const { method } = state.req;
  if (method !== 'GET' && method !== 'HEAD') throw new ApiError('method_not_allowed', undefined, NOT_ALLOWED);
};
