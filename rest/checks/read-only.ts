import type { Request, RequestHandler } from 'express';
import { ApiError } from '../../src/errors.ts';

/** GET and HEAD only; anything else is 405 with `Allow`, before authentication (docs/contract-rules.md, http.method-not-allowed). */
export function assertReadOnly(req: Request): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError('method_not_allowed', undefined, { headers: { Allow: 'GET, HEAD' } });
}

export const allowReadOnly: RequestHandler = (req, _res, next) => {
  assertReadOnly(req);
  next();
};
