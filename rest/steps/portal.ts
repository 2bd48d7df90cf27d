import { ApiError } from '../../src/errors.ts';
import { activePortalSession } from '../../src/integrations/portal.ts';
import type { IntegrationContext } from '../../src/integrations/context.ts';
import { addressKey } from '../../src/rate-limit/client-address.ts';
import type { FailureGuard } from '../../src/rate-limit/failure-guard.ts';
import type { RateLimiters } from '../../src/rate-limit/limiters.ts';
import type { Step } from '../pipeline/compose.ts';

/** The integrations page's endpoints take POST alone. */
export const postOnly: Step = (state) => {
  if (state.req.method !== 'POST') throw new ApiError('method_not_allowed', 'This endpoint accepts only POST.', { headers: { Allow: 'POST' } });
};

/**
 * A request from a page of another origin cannot act with a session: a browser names the page's
 * origin in `Origin` on every POST, and any but the service's own (PUBLIC_URL's) is refused.
 * A request without one (not from a browser's page) passes: it holds the session's token or nothing.
 */
export function sameOrigin(publicUrl: () => string): Step {
  const origins = new Map<string, string>();
  return (state) => {
    const origin = state.req.headers.origin;
    if (origin === undefined) return;
    const base = publicUrl();
    let own = origins.get(base);
    if (own === undefined) origins.set(base, (own = new URL(base).origin));
    if (origin !== own) throw new ApiError('FOREIGN_ORIGIN');
  };
}

/** The largest body the page's GraphQL endpoint reads. */
export const MAX_PORTAL_BODY = { bytes: 100 * 1024, text: '100 kB' };

/**
 * Reads the request's JSON body, at most `MAX_PORTAL_BODY`, into the state. `application/json`
 * only: a page of another site cannot send that without a preflight, which is never answered.
 */
export const jsonBody: Step = async (state) => {
  const { req } = state;
  if (!/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
    throw new ApiError('invalid_request', 'The body is JSON: send Content-Type: application/json.');
  }
  if (Number(req.headers['content-length'] ?? 0) > MAX_PORTAL_BODY.bytes) throw new ApiError('payload_too_large', `The body is larger than ${MAX_PORTAL_BODY.text}.`);
  // The listener answers `Expect: 100-continue` itself for the routes that read no body (src/server.ts); this one does.
  if (req.headers.expect?.toLowerCase() === '100-continue') state.res.writeContinue();
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > MAX_PORTAL_BODY.bytes) {
      state.headers.push('Connection', 'close');
      throw new ApiError('payload_too_large', `The body is larger than ${MAX_PORTAL_BODY.text}.`);
    }
    chunks.push(chunk);
  }
  try {
    state.body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new ApiError('invalid_request', 'The body is not valid JSON.');
  }
};

/**
 * The session named by `Authorization: Bearer svc_ps_…`, live (not expired or revoked, its member
 * still an owner or admin of the workspace: one statement per request). Any other answer is
 * SESSION_EXPIRED, counted as a failed authentication of the client address.
 */
export function portalSession(deps: { integrations: Pick<IntegrationContext, 'db'>; guard: Pick<FailureGuard, 'refuse'> }): Step {
  return async (state) => {
    const token = /^Bearer +(\S+)$/i.exec(state.req.headers.authorization ?? '')?.[1];
    const session = token === undefined ? null : await activePortalSession(deps.integrations, token);
    if (session) {
      state.portal = session;
      return;
    }
    const refusal = await deps.guard.refuse(addressKey(state.req.ip), new ApiError('SESSION_EXPIRED', undefined, { headers: { 'WWW-Authenticate': 'Bearer' } }));
    if (refusal.code === 'rate_limit_exceeded') state.limiter = 'authentication';
    throw refusal;
  };
}

/** The session's operations per window (PORTAL_RATE_LIMIT_MAX per PORTAL_RATE_LIMIT_WINDOW_S); over it, 429 with Retry-After. */
export function portalRateLimit(limiters: Pick<RateLimiters, 'consumePortal'>): Step {
  return async (state) => {
    const decision = await limiters.consumePortal(state.portalSession.id);
    if (decision.allowed) return;
    state.limiter = 'portal';
    throw new ApiError('rate_limit_exceeded', undefined, { headers: { 'Retry-After': String(Math.max(1, decision.resetSeconds)) } });
  };
}
