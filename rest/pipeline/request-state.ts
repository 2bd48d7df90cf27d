import type { Request, Response } from 'express';
import type { CacheOutcome } from '../../src/answer-cache/answer-cache.ts';
import type { ActiveApiKey } from '../../src/auth/authenticator.ts';
import type { ActiveFeed } from '../../src/calendar/feed-token-store.ts';
import type { ErrorCode } from '../../src/errors.ts';
import type { PortalSession } from '../../src/integrations/portal-store.ts';

/** Which limit answered a request 429: the key's own, the client address's failed authentications, or the feed token's. */
export type LimiterName = 'key' | 'authentication' | 'feed' | 'portal';

/** The kinds of answer the answer cache holds, as the metrics label them. */
export type AnswerKind = 'courses' | 'bookings' | 'calendar';

/** A route as the log line, the metrics and the server span name it; `unmatched` for every request no route takes. */
export type RouteName =
  | '/api/public/v1/courses'
  | '/api/public/v1/bookings'
  | '/api/calendar/v1/{token}.ics'
  | '/openapi/public-v1.yaml'
  | '/docs'
  | '/docs/assets/redoc.standalone.js'
  | '/integrations/'
  | '/integrations/assets/{file}'
  | '/integrations/api/session'
  | '/integrations/api/graphql'
  | '/healthz'
  | '/readyz'
  | 'unmatched';

/**
 * One request on its way through its route's steps: what each step learnt (the key, which limit
 * counted it, how the answer cache answered) and the headers its answer will carry. Every step,
 * the log line, the metrics and the server span read it, typed; nothing travels in `res.locals`.
 */
export class RequestState {
  readonly req: Request;
  readonly res: Response;
  readonly route: RouteName;
  /** `performance.now()` when the request reached the app. */
  readonly startedAt: number;
  /** Echoed in `X-Request-Id` and written in the log line. */
  readonly requestId: string;
  /** The path's parameter, decoded (the calendar feed's file name); empty for routes without one. */
  readonly param: string;
  /** Whether the request target has a query string (`?`, even bare). */
  readonly hasQuery: boolean;
  /** The request's valid API key, once authentication found it. */
  apiKey: ActiveApiKey | null = null;
  /** The calendar feed the path's token names, once it was found active. */
  feed: ActiveFeed | null = null;
  /** The integrations page's session its token names, once it was found live. */
  portal: PortalSession | null = null;
  /** The request's body, read by the routes that read one (JSON, parsed). */
  body: unknown = undefined;
  /** The shape its errors are sent in: the contract's, or GraphQL's on the page's GraphQL endpoint. */
  errorShape: 'rest' | 'graphql' = 'rest';
  /** The limit that refused the request, for the 429's metric label. */
  limiter: LimiterName | null = null;
  /** What the answer was, and how the answer cache produced it; null where no answer was built or sent. */
  answer: AnswerKind | null = null;
  cache: CacheOutcome | null = null;
  /** The error the request was answered with; null for a success. */
  errorCode: ErrorCode | null = null;
  /**
   * The headers of the answer as name, value pairs: those every answer carries, then what the steps
   * add (the rate limit's). The answer writes them with its own in one call.
   */
  readonly headers: string[];

  constructor(req: Request, res: Response, route: RouteName, param: string, hasQuery: boolean, requestId: string, headers: string[]) {
    this.req = req;
    this.res = res;
    this.route = route;
    this.param = param;
    this.hasQuery = hasQuery;
    this.requestId = requestId;
    this.headers = headers;
    this.startedAt = performance.now();
  }

  /** The key authentication found; a step that needs it and is declared before authentication fails loudly. */
  get key(): ActiveApiKey {
    if (this.apiKey === null) throw new Error(`${this.route}: a step that needs the API key runs before authentication`);
    return this.apiKey;
  }

  /** The page's session; a step that needs it and is declared before the session's check fails loudly. */
  get portalSession(): PortalSession {
    if (this.portal === null) throw new Error(`${this.route}: a step that needs the portal session runs before it is checked`);
    return this.portal;
  }

  /** The feed its token named; a step that needs it and is declared before the token's fails loudly. */
  get activeFeed(): ActiveFeed {
    if (this.feed === null) throw new Error(`${this.route}: a step that needs the feed runs before its token is checked`);
    return this.feed;
  }
}
