import type { DataVersion } from './data-version-store.ts';

/**
 * How a request's answer was produced. It travels with the answer to the request's state, where
 * the request log and the metrics read it:
 * - `hit`: the bytes of the workspace's current data version were cached (or being built by a
 *   request that read the same version): no statement but the version read;
 * - `miss`: built, and stored under the version read before building;
 * - `shared`: built by a concurrent request for the same answer and version, and waited for;
 * - `bypass`: built and not stored, because it is larger than the whole cache or because the
 *   workspace has no data version to key it by;
 * - `off`: the cache is turned off (`RESPONSE_CACHE_MAX_BYTES=0`).
 */
export type CacheOutcome = 'hit' | 'miss' | 'shared' | 'bypass' | 'off';

/** One answer to be served: what it is, for whom, from which fixed operation's variables. Never changed once made. */
export interface AnswerRequest {
  /** The kind of answer (`courses`, `bookings`, `calendar`): one serialisation of one operation. */
  readonly answer: string;
  readonly workspaceId: string;
  /** The operation's variables, participant variant included: part of the key. */
  readonly variables: Readonly<Record<string, unknown>>;
  /** The data version, when the caller has read it already (with the feed token); read here otherwise. */
  readonly version?: DataVersion | null;
}

export interface Answer {
  /** The exact bytes of the body, in pieces. */
  body: readonly Buffer[];
  length: number;
  outcome: CacheOutcome;
}

/** Keys of requests already seen: a caller that asks again with the same request object (one per API key and answer) serialises nothing. */
const keys = new WeakMap<AnswerRequest, string>();

export function keyOf(request: AnswerRequest): string {
  let key = keys.get(request);
  if (key === undefined) {
    key = `${request.answer}\n${request.workspaceId}\n${JSON.stringify(request.variables)}`;
    keys.set(request, key);
  }
  return key;
}
