import { createHash } from 'node:crypto';
import { Router } from 'express';
import { isWellFormedFeedToken } from '../../src/auth/secret-format.ts';
import { findActiveFeed } from '../../src/calendar/feed-token-store.ts';
import { renderCalendar } from '../../src/calendar/ics.ts';
import { ApiError } from '../../src/errors.ts';
import type { CompiledOperations } from '../../src/graphql/operations.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import { allowReadOnly } from '../middleware/method-guard.ts';
import type { GraphCalendarList } from '../resource-mappers.ts';
import { runOperation, type OperationRunner } from '../run-operation.ts';

export interface CalendarFeedDependencies extends OperationRunner {
  operations: CompiledOperations;
  rateLimiters: RateLimiters;
}

function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/** RFC 9110 13.1.2: weak comparison, a list of tags, or `*`. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

/**
 * `/api/calendar/v1/{token}.ics`: the sessions /courses lists, as RFC 5545. Unknown, malformed
 * and revoked tokens all get the same 404, saying nothing about why (decisions.md).
 */
export function calendarFeedRouter(deps: CalendarFeedDependencies): Router {
  const router = Router({ caseSensitive: true });
  router.all('/:file', allowReadOnly, async (req, res, next) => {
    res.locals.route = '/api/calendar/v1/{token}.ics';
    const file = String(req.params.file);
    const token = file.endsWith('.ics') ? file.slice(0, -4) : '';
    if (!isWellFormedFeedToken(token)) return next(new ApiError('not_found'));
    const feed = await findActiveFeed(deps.db, token);
    if (!feed) return next(new ApiError('not_found'));
    const decision = await deps.rateLimiters.consumeFeed(feed.id);
    if (!decision.allowed) {
      res.locals.limiter = 'feed';
      return next(new ApiError('rate_limit_exceeded', undefined, { headers: { 'Retry-After': String(Math.max(1, decision.resetSeconds)) } }));
    }
    const data = (await runOperation(deps, deps.operations.courses, { workspaceId: feed.workspaceId, calendar: true })) as GraphCalendarList;
    const workspace = data.workspace;
    const body = renderCalendar(
      workspace?.name ?? 'Courses',
      (workspace?.courses ?? []).map((run) => ({
        id: run.id,
        title: run.template.title,
        description: run.template.description,
        revision: run.template.revision,
        updatedAt: run.template.updatedAt,
        sessions: run.sessions,
      })),
    );
    const etag = etagOf(body);
    res.set('ETag', etag);
    // Calendar clients may keep the feed but must revalidate it: If-None-Match makes that cheap.
    res.set('Cache-Control', 'private, no-cache');
    if (matchesEtag(req.get('if-none-match'), etag)) {
      res.status(304).end();
      return;
    }
    res.type('text/calendar; charset=utf-8');
    res.send(body);
  });
  return router;
}
