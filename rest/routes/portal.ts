import type { GraphQLSchema } from 'graphql';
import { ApiError } from '../../src/errors.ts';
import type { IntegrationContext } from '../../src/integrations/context.ts';
import { openPortalSession } from '../../src/integrations/portal.ts';
import { JSON_CONTENT_TYPE } from '../../src/http-answers.ts';
import type { Logger } from '../../src/logger.ts';
import { addressKey } from '../../src/rate-limit/client-address.ts';
import type { FailureGuard } from '../../src/rate-limit/failure-guard.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import { sendText } from '../pipeline/answers.ts';
import type { Step } from '../pipeline/compose.ts';
import type { Route } from '../pipeline/route-table.ts';
import { jsonBody, portalRateLimit, portalSession, postOnly, sameOrigin } from '../steps/portal.ts';

export interface PortalDependencies {
  /** What the operations run with; its `publicUrl` is the service's own origin. */
  integrations: IntegrationContext;
  /** The schema internal GraphQL serves: the page runs the same documents through it. */
  schema: GraphQLSchema;
  rateLimiters: Pick<RateLimiters, 'consumePortal'>;
  guard: Pick<FailureGuard, 'refuse'>;
  logger: Logger;
}

/** Nothing of the page's endpoints is kept by a cache, nor does a cookie come or go. */
const NO_STORE = ['Cache-Control', 'no-store'];

/** The runner is loaded by the first page request: a start that serves no page (a newcomer's first) does not load it. */
let runner: Promise<typeof import('../../src/integrations/portal-graphql.ts')> | null = null;

/**
 * The integrations page's endpoints (docs/integrations-area.md): `POST /integrations/api/session`
 * opens a link (`Portal-Link: svc_pl_…`) once; `POST /integrations/api/graphql` runs the
 * integrations area's documents with the session's token. The page itself is served at
 * `/integrations/`.
 */
export function portalRoutes(deps: PortalDependencies): Route[] {
  const own = sameOrigin(() => deps.integrations.publicUrl);
  const openLink: Step = async (state) => {
    const link = state.req.headers['portal-link'];
    const opened = typeof link === 'string' ? await openPortalSession(deps.integrations, link.trim()) : null;
    if (!opened) {
      const refusal = await deps.guard.refuse(addressKey(state.req.ip), new ApiError('portal_link_invalid'));
      if (refusal.code === 'rate_limit_exceeded') state.limiter = 'authentication';
      throw refusal;
    }
    sendText(state, 201, JSON_CONTENT_TYPE, JSON.stringify(opened), NO_STORE);
  };
  const answer: Step = async (state) => {
    const session = state.portalSession;
    const { runPortalGraphQL } = await (runner ??= import('../../src/integrations/portal-graphql.ts'));
    const request = {
      context: deps.integrations,
      workspaces: [session.workspaceId],
      meter: { ms: 0 },
      source: 'page' as const,
      session: { memberEmail: session.memberEmail, readOnly: session.readOnly },
    };
    const answered = await runPortalGraphQL(deps.schema, request, state.body, deps.logger);
    sendText(state, answered.status, JSON_CONTENT_TYPE, answered.body, NO_STORE);
  };
  return [
    { name: '/integrations/api/session', path: '/integrations/api/session', methods: 'every', steps: [postOnly, own, openLink] },
    {
      name: '/integrations/api/graphql',
      path: '/integrations/api/graphql',
      methods: 'every',
      readsBody: true,
      errorShape: 'graphql',
      steps: [postOnly, own, portalSession(deps), portalRateLimit(deps.rateLimiters), jsonBody, answer],
    },
  ];
}
