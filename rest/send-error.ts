import type { Response } from 'express';
import { ApiError } from '../src/errors.ts';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Every error leaves in the contract's shape: `{ "error": { "code", "message" } }`. */
export function sendError(res: Response, error: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.status(error.status);
  res.set(error.headers);
  // Errors are never stored by a shared cache, whatever their status.
  res.set('Cache-Control', 'private, no-store');
  res.type(JSON_CONTENT_TYPE);
  res.send(JSON.stringify(error.toBody()));
}
