import type { RequestHandler } from 'express';
import { ApiError } from '../../src/errors.ts';

/** GET and HEAD only; anything else is 405 with `Allow`, before authentication (docs/contract-rules.md, http.method-not-allowed). */
export const allowReadOnly: RequestHandler = (req, _res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') return next();
  next(new ApiError('method_not_allowed', undefined, { headers: { Allow: 'GET, HEAD' } }));
};
