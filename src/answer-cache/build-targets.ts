import type { Queryable } from '../db/database.ts';
import { isDatabaseUnavailable } from '../errors.ts';
import type { BuildTarget } from './pieces.ts';

/** Statements on a replica fail this way when it goes away or replay cancels them: read on the primary instead. */
export function isReplicaFailure(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if ((cause as { code?: unknown }).code === '40001') return true;
  }
  return isDatabaseUnavailable(error);
}

/** One held connection as a build target: every statement of the build runs on it. */
export const onConnection = (connection: Queryable): BuildTarget => ({ withConnection: (work) => work(connection) });

export const lengthOf = (pieces: readonly Buffer[]) => pieces.reduce((sum, piece) => sum + piece.length, 0);

/** A piece with memory of its own: a cached small answer must not keep a whole shared slab alive. */
export function ownCopy(piece: Buffer): Buffer {
  const copy = Buffer.allocUnsafeSlow(piece.length);
  piece.copy(copy);
  return copy;
}
