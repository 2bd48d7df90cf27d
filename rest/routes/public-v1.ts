import { Router, type RequestHandler } from 'express';
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
import { bookingsOf, courseRunsOf, toBooking, toCourse } from '../resource-mappers.ts';
import { runOperation } from '../run-operation.ts';
import { sendList } from '../send-list.ts';

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

  router.all('/courses', routeName('courses'), ...guard, requireScope('courses:read'), rejectQueryString, async (req, res) => {
    const { apiKey } = res.locals as AuthenticatedLocals;
    const data = await runOperation(deps, deps.operations.courses, { workspaceId: apiKey.workspaceId, calendar: false }, [['Workspace', apiKey.workspace]]);
    sendList(req, res, courseRunsOf(data), toCourse);
  });

  router.all('/bookings', routeName('bookings'), ...guard, requireScope('bookings:read'), rejectQueryString, async (req, res) => {
    const { apiKey } = res.locals as AuthenticatedLocals;
    const withParticipant = apiKey.scopes.has('participants:read');
    const data = await runOperation(deps, deps.operations.bookings, { workspaceId: apiKey.workspaceId, withParticipant }, [
      ['Workspace', apiKey.workspace],
    ]);
    sendList(req, res, bookingsOf(data), (booking) => toBooking(booking, withParticipant));
  });

  return router;
}
