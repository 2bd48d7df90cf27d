import { Router, type RequestHandler, type Response } from 'express';
import type { Authenticator } from '../../src/auth/authenticator.ts';
import type { Database } from '../../src/db/database.ts';
import type { ResourceRegistry } from '../../src/db/resource.ts';
import type { CompiledOperations } from '../../src/graphql/operations.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import { authenticate, type AuthenticatedLocals } from '../middleware/authenticate.ts';
import { allowReadOnly } from '../middleware/method-guard.ts';
import { rateLimitPerKey } from '../middleware/rate-limit.ts';
import { rejectQueryString } from '../middleware/reject-query.ts';
import { requireScope } from '../middleware/require-scope.ts';
import { JSON_CONTENT_TYPE } from '../send-error.ts';
import { toBookings, toCourses } from '../resource-mappers.ts';
import { runOperation } from '../run-operation.ts';

export interface PublicV1Dependencies {
  db: Database;
  registry: ResourceRegistry;
  operations: CompiledOperations;
  authenticator: Authenticator;
  rateLimiters: RateLimiters;
}

function routeName(name: string): RequestHandler {
  return (_req, res, next) => {
    res.locals.route = `/api/public/v1/${name}`;
    next();
  };
}

/** `/api/public/v1`: the checks run in the order decisions.md fixes, then the fixed operation. */
export function publicV1Router(deps: PublicV1Dependencies): Router {
  const router = Router({ caseSensitive: true });
  const guard = [allowReadOnly, authenticate(deps.authenticator, deps.rateLimiters), rateLimitPerKey(deps.rateLimiters)];

  function sendData(res: Response, data: unknown): void {
    res.set('Cache-Control', 'private, no-store');
    res.type(JSON_CONTENT_TYPE);
    res.send(JSON.stringify({ data }));
  }

  router.all('/courses', routeName('courses'), ...guard, requireScope('courses:read'), rejectQueryString, async (_req, res) => {
    const { apiKey } = res.locals as AuthenticatedLocals;
    const data = await runOperation(deps, deps.operations.courses, { workspaceId: apiKey.workspaceId }, [['Workspace', apiKey.workspace]]);
    sendData(res, toCourses(data));
  });

  router.all('/bookings', routeName('bookings'), ...guard, requireScope('bookings:read'), rejectQueryString, async (_req, res) => {
    const { apiKey } = res.locals as AuthenticatedLocals;
    const withParticipant = apiKey.scopes.has('participants:read');
    const data = await runOperation(deps, deps.operations.bookings, { workspaceId: apiKey.workspaceId, withParticipant }, [
      ['Workspace', apiKey.workspace],
    ]);
    sendData(res, toBookings(data, withParticipant));
  });

  return router;
}
