import type { PieceVersionStore } from '../../src/answer-cache/piece-version-store.ts';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fresh from 'fresh';
import type { AnswerCache } from '../../src/answer-cache/answer-cache.ts';
import { buildCalendarFeed, calendarPieces } from '../../src/calendar/feed.ts';
import { FEED_PATH_PREFIX, type ActiveFeed } from '../../src/calendar/feed-token-store.ts';
import type { DataVersion } from '../../src/answer-cache/data-version-store.ts';
import type { Database } from '../../src/db/database.ts';
import { ApiError } from '../../src/errors.ts';
import type { OperationRuntime } from '../../src/graphql/execute-operation.ts';
import type { CompiledOperations } from '../../src/graphql/operations.ts';
import { packagePath } from '../../src/package-root.ts';
import { addressKey } from '../../src/rate-limit/client-address.ts';
import type { FailureGuard } from '../../src/rate-limit/failure-guard.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import { sendBytes, sendNotModified } from '../pipeline/answers.ts';
import type { Step } from '../pipeline/compose.ts';
import type { RequestState } from '../pipeline/request-state.ts';
import type { Route } from '../pipeline/route-table.ts';
import { readOnly } from '../steps/read-only.ts';

export interface CalendarFeedDependencies extends OperationRuntime {
  db: Database;
  operations: CompiledOperations;
  rateLimiters: Pick<RateLimiters, 'consumeFeed'>;
  guard: Pick<FailureGuard, 'refuse'>;
  /**
   * The active feed a token names, or null for a malformed, unknown or revoked one
   * (src/calendar/feed-credential.ts, on the primary, so that a revoked token is refused at once).
   */
  activeFeed: (token: string) => Promise<ActiveFeed | null>;
  answerCache: Pick<AnswerCache, 'answerInPieces'>;
  pieceVersions: PieceVersionStore;
}

/** A release may render the same data differently: its feeds then get new ETags. */
const RELEASE = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;

function strongEtag(parts: ReadonlyArray<string | Buffer>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return `"${hash.digest('base64url').slice(0, 32)}"`;
}

/**
 * The feed's ETag, from its workspace's data version: the same version, the same body. A
 * revalidation therefore needs no more than the token's statement, which reads the version too.
 */
const etagOfVersion = (workspaceId: string, dataVersion: DataVersion) => strongEtag([`calendar\n${RELEASE}\n${workspaceId}\n${dataVersion}`]);

/** A workspace without a data version gets the ETag of the bytes themselves, built every time. */
const etagOfBody = (body: readonly Buffer[]) => strongEtag(['calendar body\n', ...body]);

/** Calendar clients may keep the feed but must revalidate it: If-None-Match makes that cheap. */
const validators = (etag: string) => ['ETag', etag, 'Cache-Control', 'private, no-cache'];

/**
 * Whether the client holds the feed with this validator. `fresh` (express's own freshness check)
 * compares it with If-None-Match: weak comparison, lists and `*`, as RFC 9110 13.1.2 asks. Only
 * that header is given to it: a revalidation that also sends `Cache-Control: no-cache` is still
 * answered 304 when the feed is unchanged.
 */
const unchanged = (state: RequestState, etag: string) => fresh({ 'if-none-match': state.req.headers['if-none-match'] }, { etag });

/**
 * `/api/calendar/v1/{token}.ics`: the sessions /courses lists, as RFC 5545. Unknown, malformed
 * and revoked tokens all get the same 404, saying nothing about why (docs/contract-rules.md,
 * `calendar.not-found`).
 */
export function calendarFeedRoute(deps: CalendarFeedDependencies): Route {
  // Unknown, malformed and revoked tokens count as failed authentications of the client address;
  // a valid token is served from any address.
  const feedToken: Step = async (state) => {
    const token = state.param.endsWith('.ics') ? state.param.slice(0, -4) : '';
    const feed = await deps.activeFeed(token);
    if (feed) {
      state.feed = feed;
      return;
    }
    const refusal = await deps.guard.refuse(addressKey(state.req.ip), new ApiError('not_found'));
    if (refusal.code === 'rate_limit_exceeded') state.limiter = 'authentication';
    throw refusal;
  };
  const feedRateLimit: Step = async (state) => {
    const decision = await deps.rateLimiters.consumeFeed(state.activeFeed.id);
    if (decision.allowed) return;
    state.limiter = 'feed';
    throw new ApiError('rate_limit_exceeded', undefined, { headers: { 'Retry-After': String(Math.max(1, decision.resetSeconds)) } });
  };
  const answer: Step = async (state) => {
    const feed = state.activeFeed;
    // The version was read in the token's own statement, sent after this request arrived: it
    // counts every change committed before the request.
    const dataVersion = feed.dataVersion;
    if (dataVersion !== null) {
      const etag = etagOfVersion(feed.workspaceId, dataVersion);
      if (unchanged(state, etag)) return sendNotModified(state, validators(etag));
    }
    const variables = { workspaceId: feed.workspaceId, calendar: true };
    const answered = await deps.answerCache.answerInPieces(
      { answer: 'calendar', workspaceId: feed.workspaceId, variables, version: dataVersion },
      calendarPieces(deps, deps.operations.coursesOfRuns, feed.workspaceId),
      async (db) => [Buffer.from(await buildCalendarFeed({ ...deps, db }, deps.operations.courses, feed.workspaceId), 'utf8')],
    );
    state.answer = 'calendar';
    state.cache = answered.outcome;
    const etag = dataVersion !== null ? etagOfVersion(feed.workspaceId, dataVersion) : etagOfBody(answered.body);
    if (dataVersion === null && unchanged(state, etag)) return sendNotModified(state, validators(etag));
    sendBytes(state, 200, 'text/calendar; charset=utf-8', answered.body, answered.length, validators(etag));
  };
  return { name: '/api/calendar/v1/{token}.ics', path: FEED_PATH_PREFIX, parameter: true, methods: 'every', steps: [readOnly, feedToken, feedRateLimit, answer] };
}
