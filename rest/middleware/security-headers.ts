import type { Response } from 'express';

/** Nosniff, no referrer, no X-Powered-By; no CORS headers (docs/contract-rules.md, http.security-headers and http.no-cors). */
export function setSecurityHeaders(res: Response): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
}
