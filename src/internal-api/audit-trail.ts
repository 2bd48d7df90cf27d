import { performance } from 'node:perf_hooks';
import type { ApolloServerPlugin } from '@apollo/server';
import type { RequestHandler, Response } from 'express';
import { infoLines, type Logger } from '../logger.ts';

/**
 * What the audit trail records of one internal request. Never the variables' values, never the
 * result: who asked (the token's name), what (the operation's name and a hash of the document),
 * how long it took, how many rows the database returned and which personal columns it read.
 */
export interface AuditRecord {
  tokenId: string | null;
  tokenName: string | null;
  operationName: string | null;
  /** SHA-256 (hex) of the query document. */
  documentHash: string | null;
  /** The personal columns (`table.column`) the request's statements read or compared, sorted. */
  personalColumns: () => string[];
  /** Error codes of the answer (never their messages' details). */
  errorCodes: string[];
  /** How many rows the request's statements returned so far. */
  rows: () => number;
}

export function auditRecordOf(res: Response): AuditRecord {
  return (res.locals as { audit: AuditRecord }).audit;
}

/**
 * One log line per request to the internal GraphQL endpoint, refused ones included, when it ends.
 * Written as pino writes it, from fields serialised here (`infoLines`): pino's generic serialiser
 * and redaction cost more than the rest of a small answer's pipeline, and the lines of one turn
 * leave in one write. None of the fields can hold a secret: ids, the token's name (never the
 * token), a hash, counts, column names and error codes.
 */
export function useAuditTrail(logger: Logger): RequestHandler {
  const write = infoLines(logger, 'internal graphql request');
  return (_req, res, next) => {
    const started = performance.now();
    const record: AuditRecord = {
      tokenId: null,
      tokenName: null,
      operationName: null,
      documentHash: null,
      personalColumns: () => [],
      errorCodes: [],
      rows: () => 0,
    };
    res.locals.audit = record;
    if (write !== null) {
      res.once('close', () => {
        write(
          `"audit":"internal-graphql","tokenId":${JSON.stringify(record.tokenId)},"tokenName":${JSON.stringify(record.tokenName)},` +
            `"operationName":${JSON.stringify(record.operationName)},"documentHash":${JSON.stringify(record.documentHash)},"status":${res.statusCode},` +
            `"durationMs":${Math.round((performance.now() - started) * 10) / 10},"rows":${record.rows()},` +
            `"personalColumns":${JSON.stringify(record.personalColumns())},"errorCodes":${JSON.stringify(record.errorCodes)}`,
        );
      });
    }
    next();
  };
}

/** Fills the request's audit record from inside Apollo Server: the document, the operation, the errors. */
export function useAuditPlugin(): ApolloServerPlugin<{ audit: AuditRecord }> {
  return {
    async requestDidStart({ contextValue }) {
      const record = contextValue.audit;
      return {
        async didResolveSource({ queryHash }) {
          record.documentHash = queryHash;
        },
        async didResolveOperation({ operationName }) {
          record.operationName = operationName ?? null;
        },
        async willSendResponse({ response }) {
          if (response.body.kind === 'single') {
            record.errorCodes = (response.body.singleResult.errors ?? []).map((error) => String(error.extensions?.code ?? 'unknown'));
          }
        },
      };
    },
  };
}
