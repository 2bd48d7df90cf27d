import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { ActiveApiKey, Authenticator } from '../../src/auth/authenticator.ts';
import type { Scope } from '../../src/auth/scopes.ts';
import type { Database } from '../../src/db/database.ts';
import type { ResourceRegistry } from '../../src/db/resource-registry.ts';
import { executeOperation } from '../../src/graphql/execute-operation.ts';
import type { CompiledOperations } from '../../src/graphql/operations.ts';
import { bookingsOf, courseRunsOf, toBooking, toCourse } from '../../src/graphql/public-representation.ts';
import type { ResponseCache } from '../../src/graphql/response-cache.ts';
import type { Redactor } from '../../src/logger.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import { authenticateRequest } from '../checks/authenticate.ts';
import { keyRateLimit } from '../checks/key-rate-limit.ts';
import { assertNoQueryString } from '../checks/no-query.ts';
import { assertReadOnly } from '../checks/read-only.ts';
import { assertScope } from '../checks/scope.ts';
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

type Answer = (req: Request, res: Response, apiKey: ActiveApiKey) => Promise<void>;

/**
 * `/api/public/v1`: the checks run in the order docs/contract-rules.md fixes (`http.checks-order`),
 * then the answer: the cached bytes of the workspace's current data version, or the fixed
 * operation's result serialised (and cached). The workspace row primed from the key is used for
 * its id alone, which never changes.
 *
 * Each route is one handler that runs its checks in turn: as a chain of router layers they cost
 * every request a layer each, a measurable share of a cached answer's time.
 */
export function publicV1Router(deps: PublicV1Dependencies): Router {
  const router = Router({ caseSensitive: true });
  const consumeKeyLimit = keyRateLimit(deps.rateLimiters);
  const listRoute = (name: string, scope: Scope, answer: Answer): RequestHandler => {
    const route = `/api/public/v1/${name}`;
    return async (req, res) => {
      res.locals.route = route;
      assertReadOnly(req);
      const apiKey = await authenticateRequest(deps.authenticator, req, res);
      await consumeKeyLimit(res, apiKey);
      assertScope(apiKey, scope);
      assertNoQueryString(req, deps.redactor);
      await answer(req, res, apiKey);
    };
  };

  router.all(
    '/courses',
    listRoute('courses', 'courses:read', async (req, res, apiKey) => {
      const variables = { workspaceId: apiKey.workspaceId, calendar: false };
      const answer = await deps.responseCache.answer({ answer: 'courses', workspaceId: apiKey.workspaceId, variables }, async (db) =>
        listBody(courseRunsOf(await executeOperation({ ...deps, db }, deps.operations.courses, variables, { Workspace: apiKey.workspace })), toCourse),
      );
      res.locals.cache = answer.outcome;
      sendListBody(req, res, answer.body, answer.length);
    }),
  );

  router.all(
    '/bookings',
    listRoute('bookings', 'bookings:read', async (req, res, apiKey) => {
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
    }),
  );

  return router;
}
