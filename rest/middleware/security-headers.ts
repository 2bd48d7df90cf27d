import type { Response } from 'express';
import { SECURITY_HEADERS } from '../../src/http-answers.ts';

/** Nosniff, no referrer, no X-Powered-By; no CORS headers (docs/contract-rules.md, http.security-headers and http.no-cors). */
export function setSecurityHeaders(res: Response): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
}
