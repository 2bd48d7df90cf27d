import type { Database } from '../../src/db/database.ts';
import { pendingMigrations } from '../../src/db/migrate.ts';
import type { ReplicaSet } from '../../src/db/replicas.ts';
import { JSON_CONTENT_TYPE } from '../../src/http-answers.ts';
import { sendText } from '../pipeline/answers.ts';
import type { RequestState } from '../pipeline/request-state.ts';
import type { Route } from '../pipeline/route-table.ts';

interface Readiness {
  status: number;
  body: object;
}

/** How long one answer of the database check serves every /readyz request. */
const READINESS_CHECK_INTERVAL_MS = 1000;

/**
 * `/healthz`: the process answers. `/readyz`: the database answers, its schema is current and the
 * instance is not shutting down. No auth, no data. The database is asked at most once per second
 * per process, however often /readyz is called: it cannot be used to load the database. With
 * read replicas the body lists each one's state (from their own checks, no statement here): a
 * replica down or lagging is skipped for the primary, so the instance stays ready.
 */
export function healthRoutes(db: Database, lifecycle: { draining: boolean }, replicas?: Pick<ReplicaSet, 'statuses'>): Route[] {
  const check = async (): Promise<Readiness> => {
    try {
      if ((await pendingMigrations(db)).length > 0) return { status: 503, body: { status: 'unavailable', reason: 'migrations pending' } };
      return { status: 200, body: { status: 'ready' } };
    } catch {
      return { status: 503, body: { status: 'unavailable', reason: 'database unreachable' } };
    }
  };
  let last: { at: number; readiness: Promise<Readiness> } | null = null;
  const readiness = (): Promise<Readiness> => {
    const now = Date.now();
    if (!last || now - last.at >= READINESS_CHECK_INTERVAL_MS) last = { at: now, readiness: check() };
    return last.readiness;
  };
  const send = (state: RequestState, status: number, body: object) => sendText(state, status, JSON_CONTENT_TYPE, JSON.stringify(body), ['Cache-Control', 'no-store']);
  return [
    { name: '/healthz', path: '/healthz', methods: 'read', steps: [(state) => send(state, 200, { status: 'ok' })] },
    {
      name: '/readyz',
      path: '/readyz',
      methods: 'read',
      steps: [
        async (state) => {
          if (lifecycle.draining) return send(state, 503, { status: 'unavailable', reason: 'shutting down' });
          const { status, body } = await readiness();
          send(state, status, replicas ? { ...body, replicas: replicas.statuses() } : body);
        },
      ],
    },
  ];
}
