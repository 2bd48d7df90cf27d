/**
 * The errors of the public contract: each code is documented in openapi/public-v1.yaml (a test
 * checks both directions). Messages are safe to send: no hashes, key material, SQL or internal ids.
 */
const contractErrors = {
  invalid_request: { status: 400, message: 'The request is not valid.' },
  invalid_api_key: { status: 401, message: 'The API key is missing, invalid, revoked or rotated.' },
  missing_scope: { status: 403, message: 'The API key lacks the scope this endpoint requires.' },
  ip_not_allowed: { status: 403, message: 'The API key may not be used from this client address.' },
  not_found: { status: 404, message: 'No resource exists at this path.' },
  method_not_allowed: { status: 405, message: 'This endpoint accepts only GET and HEAD.' },
  request_timeout: { status: 408, message: 'The request was not received in time.' },
  rate_limit_exceeded: { status: 429, message: 'Too many requests; wait for the time given in Retry-After.' },
  internal_error: { status: 500, message: 'An unexpected error occurred.' },
  service_unavailable: { status: 503, message: 'The service is temporarily unavailable; retry later.' },
} as const satisfies Record<string, { status: number; message: string }>;

/**
 * Errors only the internal listener answers: it reads request bodies, which the public listener
 * never does, so they are not part of the public contract. The GraphQL ones keep the codes GraphQL
 * clients know (Apollo's persisted queries, the budgets of GitHub's and Shopify's APIs).
 */
const internalListenerErrors = {
  payload_too_large: { status: 413, message: 'The request body is larger than this endpoint accepts.' },
  DOCUMENT_NOT_TRUSTED: { status: 403, message: 'This token runs only the documents registered for it.' },
  PERSONAL_DATA_NOT_GRANTED: { status: 403, message: 'This token has no personal-data grant.' },
  INTEGRATIONS_NOT_GRANTED: { status: 403, message: 'This token has no integrations grant.' },
  FORBIDDEN: { status: 403, message: 'The acting member may not do this in this workspace.' },
  BAD_USER_INPUT: { status: 400, message: 'An argument is not valid.' },
  PERSISTED_QUERY_NOT_FOUND: { status: 404, message: 'No document is registered for this token under this id.' },
  RATE_LIMITED: { status: 429, message: "This token's cost budget is spent; retry after the seconds given in Retry-After." },
  QUERY_TIMEOUT: { status: 503, message: 'A statement of this request ran longer than the statement timeout of internal GraphQL and was cancelled.' },
} as const satisfies Record<string, { status: number; message: string }>;

/**
 * Errors of the integrations page's endpoints on the public listener (docs/integrations-area.md):
 * they read bodies and sessions, which the public API v1 never does, so they are not part of its
 * contract either. One message for a used, expired, revoked or unknown link: which it was is not said.
 */
const portalErrors = {
  portal_link_invalid: { status: 401, message: 'This link was already opened, has expired or was revoked. Ask for a new one.' },
  SESSION_EXPIRED: { status: 401, message: 'This session has ended: it expired, was revoked, or its member may no longer manage integrations. Ask for a new link.' },
  READ_ONLY_SESSION: { status: 403, message: 'This session is read-only: it changes nothing.' },
  FOREIGN_ORIGIN: { status: 403, message: "Requests from another origin than the service's own are refused." },
} as const satisfies Record<string, { status: number; message: string }>;

/** The one error catalogue: every error a client can see, REST and GraphQL alike. */
export const errorCatalogue = { ...contractErrors, ...internalListenerErrors, ...portalErrors };

export type ErrorCode = keyof typeof errorCatalogue;

/** The codes of the public contract (those openapi/public-v1.yaml documents). */
export const errorCodes = Object.keys(contractErrors) as ErrorCode[];

/** The answer of the internal GraphQL endpoint: GraphQL's `errors` with the code in `extensions.code`. */
export interface GraphQLErrorBody {
  errors: [{ message: string; extensions: { code: ErrorCode } }];
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

/** An error meant for the client: its code, status and a safe message. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Response headers that belong to this error (Allow, Retry-After, WWW-Authenticate …). */
  readonly headers: Readonly<Record<string, string>>;
  /** The argument or input field a BAD_USER_INPUT is about, when it is about one. */
  readonly field: string | undefined;

  constructor(code: ErrorCode, message?: string, options?: { headers?: Record<string, string>; cause?: unknown; field?: string | undefined }) {
    super(message ?? errorCatalogue[code].message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = errorCatalogue[code].status;
    this.headers = options?.headers ?? {};
    this.field = options?.field;
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message } };
  }

  toGraphQLBody(): GraphQLErrorBody {
    return { errors: [{ message: this.message, extensions: { code: this.code } }] };
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

/** SQLSTATE classes and client-side failures that mean "the database cannot be reached now". */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-4]|57014)/;
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'connection timeout',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
  'Connection ended unexpectedly',
];

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_SQLSTATE.test(code)) return true;
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) return true;
  }
  if (UNAVAILABLE_MESSAGES.some((text) => error.message.includes(text))) return true;
  return error.cause !== undefined && error.cause !== error && isDatabaseUnavailable(error.cause);
}

/**
 * A request's statements stopped because they took the database time they were allowed
 * (`StatementMeter.allowance`): those running then were cancelled, and none starts after. The
 * message says why, for the client.
 */
export class DatabaseTimeSpent extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'DatabaseTimeSpent';
  }
}

/** A statement cancelled by its timeout: PostgreSQL's (SQLSTATE 57014 with its message) or the client's own bound. */
export function isStatementTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if ((error as { code?: unknown }).code === '57014' && error.message.includes('statement timeout')) return true;
  return error.message.includes('Query read timeout') || (error.cause !== undefined && error.cause !== error && isStatementTimeout(error.cause));
}

/** Turns anything thrown into a client-safe error: known ones pass, unknown ones are masked. */
export function toApiError(error: unknown): ApiError {
  if (isApiError(error)) return error;
  if (isDatabaseUnavailable(error)) {
    return new ApiError('service_unavailable', undefined, { headers: { 'Retry-After': '5' }, cause: error });
  }
  return new ApiError('internal_error', undefined, { cause: error });
}
