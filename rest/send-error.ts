import type { Response } from 'express';
import type { ApiError } from '../src/errors.ts';
import { errorAnswer } from '../src/http-answers.ts';

/** Every error leaves in the contract's shape: `{ "error": { "code", "message" } }`. */
export function sendError(res: Response, error: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const answer = errorAnswer(error);
  res.status(answer.status).set(answer.headers).send(answer.body);
}
