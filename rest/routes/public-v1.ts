import { Router, type RequestHandler } from 'express';
import type { Authenticator } from '../../src/auth/authenticator.ts';
import type { Database } from '../../src/db/database.ts';
import type { ResourceRegistry } from '../../src/db/resource-registry.ts';
import { executeOperation } from '../../src/graphql/execute-operation.ts';
import type { CompiledOperations } from '../../src/graphql/operations.ts';
import { bookingsOf, courseRunsOf, toBooking, toCourse } from '../../src/graphql/public-representation.ts';
import type { ResponseCache } from '../../src/graphql/response-cache.ts';
import type { Redactor } from '../../src/logger.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import { authenticate, type AuthenticatedLocals } from '../middleware/authenticate.ts';
import { allowReadOnly } from '../middleware/method-guard.ts';
import { rateLimitPerKey } from '../middleware/rate-limit.ts';
import { rejectQueryString } from '../middleware/reject-query.ts';
import { requireScope } from '../middleware/require-scope.ts';
import { listBody, sendListBody } from '../send-list.ts';

export interface PublicV1Dependencies {
  db: Database;
  registry: ResourceRegistry;
  operations: CompiledOperations;
  authenticator: Authenticator;
  rateLimiters: RateLimiters;
  responseCache: ResponseCache;
  /** Removes secrets from what is logged of a request, and from what an error echoes of it. */
  redactor: Redactor;
}

function routeName(name: string): RequestHandler {
  return (_req, res, next) => {
    res.locals.route = `/api/public/v1/${name}`;
    next();
  };
}

/**
 * `/api/public/v1`: the checks run in the order docs/contract-rules.md fixes (`http.checks-order`),
 * then the answer: the cached bytes of the workspace's current data version, or the fixed
 * operation's result serialised (and cached). The workspace row primed from the key is used for
 * its id alone, which never changes.
 */
export function publicV1Router(deps: PublicV1Dependencies): Router {
  const router = Router({ caseSensitive: true });
  const guard = [allowReadOnly, authenticate(deps.authenticator), rateLimitPerKey(deps.rateLimiters)];
  const noQuery = rejectQueryString(deps.redactor);

  router.all('/courses', routeName('courses'), ...guard, requireScope('courses:read'), noQuery, async (req, res) => {
    const { apiKey } = res.locals as AuthenticatedLocals;
    const variables = { workspaceId: apiKey.workspaceId, calendar: false };
    const answer = await deps.responseCache.answer({ answer: 'courses', workspaceId: apiKey.workspaceId, variables }, async (db) =>
      listBody(courseRunsOf(await executeOperation({ ...deps, db }, deps.operations.courses, variables, { Workspace: apiKey.workspace })), toCourse),
    );
    res.locals.cache = answer.outcome;
    sendListBody(req, res, answer.body, answer.length);
  });

  router.all('/bookings', routeName('bookings'), ...guard, requireScope('bookings:read'), noQuery, async (req, res) => {
    const { apiKey } = res.locals as AuthenticatedLocals;
    const withParticipant = apiKey.scopes.has('participants:read');
    // The participant variant is one of the variables, so it is part of the cache key: a key
    // without participants:read never gets bytes built for one with it.
    const variables = { workspaceId: apiKey.workspaceId, withParticipant };
    const answer = await deps.responseCache.answer({ answer: 'bookings', workspaceId: apiKey.workspaceId, variables }, async (db) =>
      listBody(
        bookingsOf(await executeOperation({ ...deps, db }, deps.operations.bookings, variables, { Workspace: apiKey.workspace })),
        (booking) => toBooking(booking, withParticipant),
      ),
    );
    res.locals.cache = answer.outcome;
    sendListBody(req, res, answer.body, answer.length);
  });

  return router;
}
