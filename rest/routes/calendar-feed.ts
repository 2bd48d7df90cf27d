import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fresh from 'fresh';
import { Router } from 'express';
import type { IssuedCredentials } from '../../src/auth/issued-credentials.ts';
import { buildCalendarFeed } from '../../src/calendar/feed.ts';
import { activeFeedOf } from '../../src/calendar/feed-credential.ts';
import type { DataVersion } from '../../src/db/data-versions.ts';
import type { Database } from '../../src/db/database.ts';
import { ApiError } from '../../src/errors.ts';
import type { OperationRuntime } from '../../src/graphql/execute-operation.ts';
import type { CompiledOperations } from '../../src/graphql/operations.ts';
import { addressKey } from '../../src/rate-limit/client-address.ts';
import type { FailureGuard } from '../../src/rate-limit/failure-guard.ts';
import type { ResponseCache } from '../../src/graphql/response-cache.ts';
import { packagePath } from '../../src/package-root.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import { allowReadOnly } from '../checks/read-only.ts';

export interface CalendarFeedDependencies extends OperationRuntime {
  /** The primary: feed tokens are looked up there, so that a revoked one is refused at once. */
  db: Database;
  operations: CompiledOperations;
  rateLimiters: RateLimiters;
  guard: FailureGuard;
  issued: IssuedCredentials;
  responseCache: ResponseCache;
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

/**
 * `/api/calendar/v1/{token}.ics`: the sessions /courses lists, as RFC 5545. Unknown, malformed
 * and revoked tokens all get the same 404, saying nothing about why (docs/contract-rules.md,
 * `calendar.not-found`).
 */
export function calendarFeedRouter(deps: CalendarFeedDependencies): Router {
  const router = Router({ caseSensitive: true });
  router.all('/:file', allowReadOnly, async (req, res, next) => {
    res.locals.route = '/api/calendar/v1/{token}.ics';
    const file = String(req.params.file);
    const token = file.endsWith('.ics') ? file.slice(0, -4) : '';
    // Unknown, malformed and revoked tokens count as failed authentications of the client address;
    // a valid token is served from any address.
    const feed = await activeFeedOf(deps.db, deps.issued, token);
    if (!feed) {
      const refusal = await deps.guard.refuse(addressKey(req.ip), new ApiError('not_found'));
      if (refusal.code === 'rate_limit_exceeded') res.locals.limiter = 'authentication';
      return next(refusal);
    }
    const decision = await deps.rateLimiters.consumeFeed(feed.id);
    if (!decision.allowed) {
      res.locals.limiter = 'feed';
      return next(new ApiError('rate_limit_exceeded', undefined, { headers: { 'Retry-After': String(Math.max(1, decision.resetSeconds)) } }));
    }
    // The version was read in the token's own statement, sent after this request arrived: it
    // counts every change committed before the request.
    const dataVersion = feed.dataVersion;
    // Sets the feed's validator; true when the client holds it already. `fresh` (express's own
    // freshness check) compares it with If-None-Match: weak comparison, lists and `*`, as RFC 9110
    // 13.1.2 asks. Only that header is given to it: a revalidation that also sends
    // `Cache-Control: no-cache` is still answered 304 when the feed is unchanged, as before.
    const unchanged = (etag: string) => {
      res.set('ETag', etag);
      // Calendar clients may keep the feed but must revalidate it: If-None-Match makes that cheap.
      res.set('Cache-Control', 'private, no-cache');
      return fresh({ 'if-none-match': req.get('if-none-match') }, { etag });
    };
    if (dataVersion !== null && unchanged(etagOfVersion(feed.workspaceId, dataVersion))) {
      res.status(304).end();
      return;
    }
    const variables = { workspaceId: feed.workspaceId, calendar: true };
    const answer = await deps.responseCache.answer(
      { answer: 'calendar', workspaceId: feed.workspaceId, variables, version: dataVersion },
      async (db) => [Buffer.from(await buildCalendarFeed({ ...deps, db }, deps.operations.courses, feed.workspaceId), 'utf8')],
    );
    res.locals.cache = answer.outcome;
    if (dataVersion === null && unchanged(etagOfBody(answer.body))) {
      res.status(304).end();
      return;
    }
    res.type('text/calendar; charset=utf-8');
    res.send(answer.body.length === 1 ? answer.body[0] : Buffer.concat(answer.body));
  });
  return router;
}
