import type { RequestHandler } from 'express';

/** decisions.md: nosniff, no referrer, no X-Powered-By; no CORS headers (server-to-server API). */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set('X-Content-Type-Options', 'nosniff');
  res.set('Referrer-Policy', 'no-referrer');
  next();
};
