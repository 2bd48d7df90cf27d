import { STATUS_CODES } from 'node:http';
import type { ApiError } from './errors.ts';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/** GraphQL over HTTP's media type of a response, which a client asks for in `Accept`. */
export const GRAPHQL_RESPONSE_CONTENT_TYPE = 'application/graphql-response+json; charset=utf-8';

/** Nosniff, no referrer; never X-Powered-By or CORS headers (docs/contract-rules.md, http.security-headers and http.no-cors). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = { 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };

/** An error as it is sent: status, headers and body. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The one function that turns an error of the catalogue (src/errors.ts) into what is sent, on
 * every listener and every path, express's answers and the raw socket's alike: the contract's
 * shape (`{ "error": { "code", "message" } }`) or, on the internal GraphQL endpoint, GraphQL's
 * `errors` (in the media type the client asked for, `graphqlContentType`). Errors are never
 * stored by a shared cache, whatever their status.
 */
export function errorAnswer(error: ApiError, shape: 'rest' | 'graphql' = 'rest', contentType = JSON_CONTENT_TYPE): ErrorAnswer {
  return {
    status: error.status,
    headers: { ...error.headers, 'Content-Type': contentType, 'Cache-Control': 'private, no-store' },
    body: JSON.stringify(shape === 'graphql' ? error.toGraphQLBody() : error.toBody()),
  };
}

/**
 * The same answer as HTTP/1.1 bytes, for a socket no app answers (a request Node's parser refused,
 * or one that timed out), with the security headers every answer carries; the connection closes.
 */
export function rawErrorAnswer(error: ApiError): string {
  const answer = errorAnswer(error);
  const headers = { ...answer.headers, ...SECURITY_HEADERS, 'Content-Length': String(Buffer.byteLength(answer.body)), Connection: 'close' };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n${head}\r\n${answer.body}`;
}
