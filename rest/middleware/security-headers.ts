import type { RequestHandler } from 'express';

/** Nosniff, no referrer, no X-Powered-By; no CORS headers (docs/contract-rules.md, http.security-headers and http.no-cors). */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set('X-Content-Type-Options', 'nosniff');
  res.set('Referrer-Policy', 'no-referrer');
  next();
};
