import type { RequestHandler } from 'express';

/**
 * Request bodies are never read (docs/contract-rules.md, http.no-body). Rather than drain whatever a client sends, the
 * connection of a request that carries a body is closed once it is answered.
 */
export const closeConnectionsWithBodies: RequestHandler = (req, res, next) => {
  const length = Number(req.headers['content-length'] ?? 0);
  if (length > 0 || req.headers['transfer-encoding'] !== undefined) res.set('Connection', 'close');
  next();
};
