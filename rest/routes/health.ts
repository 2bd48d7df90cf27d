import { Router } from 'express';
import type { Database } from '../../src/db/database.ts';
import { pendingMigrations } from '../../src/db/migrate.ts';
import { JSON_CONTENT_TYPE } from '../send-error.ts';

/**
 * `/healthz`: the process answers. `/readyz`: the database answers, its schema is current and the
 * instance is not shutting down. No auth, no data.
 */
export function healthRouter(db: Database, lifecycle: { draining: boolean }): Router {
  const router = Router();
  const send = (res: import('express').Response, status: number, body: object) => {
    res.status(status).set('Cache-Control', 'no-store').type(JSON_CONTENT_TYPE).send(JSON.stringify(body));
  };
  router.get('/healthz', (_req, res) => {
    res.locals.route = '/healthz';
    send(res, 200, { status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    res.locals.route = '/readyz';
    if (lifecycle.draining) return send(res, 503, { status: 'unavailable', reason: 'shutting down' });
    try {
      if ((await pendingMigrations(db)).length > 0) return send(res, 503, { status: 'unavailable', reason: 'migrations pending' });
      send(res, 200, { status: 'ready' });
    } catch {
      send(res, 503, { status: 'unavailable', reason: 'database unreachable' });
    }
  });
  return router;
}
