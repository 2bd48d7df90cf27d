import type { Request, Response } from 'express';

/**
 * Request bodies are never read (docs/contract-rules.md, http.no-body). Rather than drain whatever a client sends, the
 * connection of a request that carries a body is closed once it is answered.
 */
export function closeIfBodySent(req: Request, res: Response): void {
  const length = Number(req.headers['content-length'] ?? 0);
  if (length > 0 || req.headers['transfer-encoding'] !== undefined) res.setHeader('Connection', 'close');
}
