import type { Request, RequestHandler, Response } from 'express';
import { findRegisteredDocument } from '../auth/internal-document-store.ts';
import type { InternalPrincipal } from '../auth/internal-token-store.ts';
import { documentHash, hashOfDocumentId } from '../auth/trusted-documents.ts';
import type { Queryable } from '../db/database.ts';
import { ApiError } from '../errors.ts';
import { errorAnswer } from '../http-answers.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../observability/metrics.ts';
import { auditRecordOf } from './audit-trail.ts';
import type { CostBudget } from '../graphql/work/budget.ts';
import { graphqlContentType } from './listener-errors.ts';

export interface DocumentGateOptions {
  /** Where registered documents are read: the primary, as tokens are. */
  db: Queryable;
  budget: CostBudget;
  metrics: Metrics;
  logger: Logger;
}

/** The GraphQL parameters of a request as sent: the JSON body, or the query string of a GET. */
interface Parameters {
  query?: unknown;
  documentId?: unknown;
  extensions?: unknown;
}

const invalid = (message: string) => new ApiError('invalid_request', message);

function parametersOf(req: Request): Parameters | null {
  if (req.method === 'GET') {
    const search = new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1 || req.url.length));
    let extensions: unknown;
    const text = search.get('extensions');
    if (text !== null) {
      try {
        extensions = JSON.parse(text);
      } catch {
        extensions = text;
      }
    }
    return { query: search.get('query') ?? undefined, documentId: search.get('documentId') ?? undefined, extensions };
  }
  const body: unknown = req.body;
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Parameters) : null;
}

/** The hash a request names its document by (`documentId` or Apollo's persisted query), or undefined. */
function presentedHash(parameters: Parameters): string | undefined {
  const { documentId, extensions } = parameters;
  const persisted = extensions !== null && typeof extensions === 'object' ? (extensions as { persistedQuery?: unknown }).persistedQuery : undefined;
  let hash: string | undefined;
  if (documentId !== undefined && documentId !== null) {
    hash = (typeof documentId === 'string' && hashOfDocumentId(documentId)) || undefined;
    if (!hash) throw invalid('"documentId" must be a document id: the SHA-256 of the document as 64 lowercase hexadecimal characters, alone or after sha256:.');
  }
  if (persisted !== undefined && persisted !== null) {
    const { version, sha256Hash } = persisted as { version?: unknown; sha256Hash?: unknown };
    const apollo = version === 1 && typeof sha256Hash === 'string' ? hashOfDocumentId(sha256Hash) : null;
    if (!apollo || sha256Hash !== apollo) throw invalid('"extensions.persistedQuery" must be {"version": 1, "sha256Hash": "<64 lowercase hexadecimal characters>"}.');
    if (hash !== undefined && hash !== apollo) throw invalid('"documentId" and "extensions.persistedQuery" name different documents.');
    hash = apollo;
  }
  return hash;
}

/** How a request named its document: Apollo Client's persisted query link, GraphQL over HTTP's `documentId`, or its text alone. */
type Form = 'apollo' | 'documentId' | 'text';

function formOf(parameters: Parameters): Form {
  const extensions = parameters.extensions;
  if (extensions !== null && typeof extensions === 'object' && (extensions as { persistedQuery?: unknown }).persistedQuery != null) return 'apollo';
  return parameters.documentId != null ? 'documentId' : 'text';
}

/** How the documents of the client that sent this form get registered, as a refusal says it (docs/internal-graphql.md, Trusted documents). */
function registration(form: Form, token: string | null): string {
  if (token === null) return 'The bootstrap token (INTERNAL_API_TOKEN) has no registered documents: give the client a named token (internal-token create) and register its documents for it.';
  const add = (file: string) => `npm run admin -- internal-token documents add --name ${token} --file ${file}`;
  const apollo = `Apollo Client's documents are registered from the manifest @apollo/generate-persisted-query-manifest writes: ${add('persisted-query-manifest.json')}`;
  const codegen = `GraphQL Code Generator's client preset (persistedDocuments) writes them to persisted-documents.json: ${add('src/gql/persisted-documents.json')}`;
  if (form === 'apollo') return `${apollo}.`;
  if (form === 'documentId') return `${codegen}.`;
  return `${codegen}, and graphql-request sends each document's registered text; ${apollo}.`;
}

/** The request as Apollo Server then reads it: the document's text, without the persisted forms. */
function rewrite(req: Request, parameters: Parameters, query: string): void {
  const { persistedQuery: _persisted, ...extensions } = (parameters.extensions ?? {}) as Record<string, unknown>;
  if (req.method === 'GET') {
    const at = req.url.indexOf('?');
    const search = new URLSearchParams(at === -1 ? '' : req.url.slice(at + 1));
    search.delete('documentId');
    search.set('query', query);
    if (Object.keys(extensions).length > 0) search.set('extensions', JSON.stringify(extensions));
    else search.delete('extensions');
    req.url = `${at === -1 ? req.url : req.url.slice(0, at)}?${search.toString()}`;
    return;
  }
  const { documentId: _id, extensions: _extensions, ...rest } = parameters;
  req.body = { ...rest, query, ...(Object.keys(extensions).length > 0 ? { extensions } : {}) };
}

/**
 * Trusted documents (docs/internal-graphql.md): a request may name its document by hash
 * (`documentId`, as GraphQL over HTTP's persisted documents, or Apollo's
 * `extensions.persistedQuery.sha256Hash`), which must be registered for its token; a document
 * sent whole must match a hash sent with it. By the token's mode, a document sent whole that is
 * not registered for it runs (`any`), runs and is logged (`log`) or is refused (`trusted`).
 * Apollo Server's own automatic persisted queries are off: no client can register a document by
 * sending it.
 */
export function documentGate(options: DocumentGateOptions): RequestHandler {
  const refuse = async (res: Response, principal: InternalPrincipal, error: ApiError) => {
    auditRecordOf(res).errorCodes = [error.code];
    const cost = await options.budget.peek(principal);
    const answer = errorAnswer(error, 'graphql', graphqlContentType(res.req));
    const body = cost ? { ...(JSON.parse(answer.body) as object), extensions: { cost } } : JSON.parse(answer.body);
    res.status(answer.status).set(answer.headers).set(cost ? options.budget.headers(cost) : {}).send(JSON.stringify(body));
  };
  return async (req, res, next) => {
    const principal = (res.locals as { principal: InternalPrincipal }).principal;
    const parameters = parametersOf(req);
    // Anything else is not a GraphQL request: Apollo Server answers it (400 BAD_REQUEST).
    if (!parameters) return next();
    try {
      const hash = presentedHash(parameters);
      const query = typeof parameters.query === 'string' && parameters.query !== '' ? parameters.query : undefined;
      if (hash !== undefined && query !== undefined && documentHash(query) !== hash) throw invalid('The SHA-256 of the document sent is not the hash sent with it.');
      const lookup = hash ?? (query !== undefined && principal.documents !== 'any' ? documentHash(query) : undefined);
      if (lookup !== undefined) auditRecordOf(res).documentHash = lookup;
      const registered = lookup !== undefined && principal.id !== null ? await findRegisteredDocument(options.db, principal.id, lookup) : null;
      if (hash !== undefined && query === undefined) {
        if (registered === null) {
          throw new ApiError('PERSISTED_QUERY_NOT_FOUND', `No document is registered for the token "${principal.name}" under sha256:${hash}. ${registration(formOf(parameters), principal.id === null ? null : principal.name)}`);
        }
        rewrite(req, parameters, registered);
      } else if (query !== undefined) {
        if (registered === null && principal.documents !== 'any') {
          options.metrics.internalUnregisteredDocuments.inc({ token: principal.name, mode: principal.documents });
          if (principal.documents === 'trusted') {
            throw new ApiError(
              'DOCUMENT_NOT_TRUSTED',
              `The token "${principal.name}" runs only the documents registered for it, and this one (sha256:${lookup}) is not. ${registration(formOf(parameters), principal.id === null ? null : principal.name)}`,
            );
          }
          const operationName = typeof (parameters as { operationName?: unknown }).operationName === 'string' ? (parameters as { operationName: string }).operationName : null;
          options.logger.warn({ tokenName: principal.name, documentHash: lookup, operationName }, 'internal graphql document not registered for its token');
        }
        if (hash !== undefined) rewrite(req, parameters, query);
      }
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) return refuse(res, principal, error);
      return next(error);
    }
    next();
  };
}
