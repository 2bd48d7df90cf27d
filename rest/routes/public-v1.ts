import { Router, type Request, type Response } from 'express';
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

/** One list route: its checks in order, then its answer. */
export type ListRoute = (req: Request, res: Response) => Promise<void>;

export interface PublicV1Routes {
  /** Mounted at `/api/public/v1`: every request under it that the exact paths below do not take. */
  router: Router;
  /**
   * The list routes by their exact path (`/api/public/v1/courses`, no query string): the public
   * app calls these from its first layer, so that the bulk of the traffic passes no router layer.
   * The router runs the very same functions for every other spelling the router accepts.
   */
  byPath: ReadonlyMap<string, ListRoute>;
}

/**
 * `/api/public/v1`: the checks run in the order docs/contract-rules.md fixes (`http.checks-order`),
 * then the answer: the cached bytes of the workspace's current data version, or the fixed
 * operation's result serialised (and cached). The workspace row primed from the key is used for
 * its id alone, which never changes.
 *
 * Each route is one handler that runs its checks in turn: as a chain of router layers they cost
 * every request a layer each, a measurable share of a cached answer's time.
 */
export function publicV1Routes(deps: PublicV1Dependencies): PublicV1Routes {
  const router = Router({ caseSensitive: true });
  const byPath = new Map<string, ListRoute>();
  const consumeKeyLimit = keyRateLimit(deps.rateLimiters);
  const listRoute = (name: string, scope: Scope, answer: Answer): ListRoute => {
    const route = `/api/public/v1/${name}`;
    const handler: ListRoute = async (req, res) => {
      res.locals.route = route;
      assertReadOnly(req);
      const apiKey = await authenticateRequest(deps.authenticator, req, res);
      await consumeKeyLimit(res, apiKey);
      assertScope(apiKey, scope);
      assertNoQueryString(req, deps.redactor);
      await answer(req, res, apiKey);
    };
    byPath.set(route, handler);
    return handler;
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

  return { router, byPath };
}
