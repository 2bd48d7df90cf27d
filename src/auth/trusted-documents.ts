import { createHash } from 'node:crypto';
import { GraphQLError, Kind, parse, print, separateOperations, type DocumentNode } from 'graphql';
import { InputError } from '../input-error.ts';

/** A document as it is registered for a token: its exact text and the SHA-256 of that text. */
export interface TrustedDocument {
  /** SHA-256 of `body` (UTF-8), lowercase hex. */
  hash: string;
  body: string;
  operationNames: string[];
}

/** The largest document that can be registered: the largest body the internal endpoint reads. */
export const MAX_DOCUMENT_BYTES = 100 * 1024;

/** The hash a document is registered and found under: SHA-256 of its exact text, lowercase hex. */
export function documentHash(body: string): string {
  return createHash('sha256').update(body, 'utf8').digest('hex');
}

/**
 * The one rule for a document id (docs/internal-graphql.md, Sending a registered document): the
 * SHA-256 of the document as 64 lowercase hexadecimal characters, after `sha256:` (GraphQL over
 * HTTP's prefixed form, which GraphQL Code Generator's manifests and hashes use) or alone (Apollo's
 * manifests). Anything else names no document: another algorithm, uppercase, another length.
 */
export const DOCUMENT_ID = /^(?:sha256:)?([0-9a-f]{64})$/;

/** The hash a document id names (see `DOCUMENT_ID`), or null when it is not a document id. */
export function hashOfDocumentId(id: string): string | null {
  return DOCUMENT_ID.exec(id)?.[1] ?? null;
}

/** The document's operations' names; refuses what is not an executable document with an operation. */
function operationNamesOf(body: string, where: string): string[] {
  if (Buffer.byteLength(body, 'utf8') > MAX_DOCUMENT_BYTES) throw new InputError(`${where} is larger than ${MAX_DOCUMENT_BYTES / 1024} kB`);
  let document: DocumentNode;
  try {
    document = parse(body);
  } catch (error) {
    throw new InputError(`${where} is not a GraphQL document: ${error instanceof GraphQLError ? error.message : String(error)}`);
  }
  const foreign = document.definitions.find((definition) => definition.kind !== Kind.OPERATION_DEFINITION && definition.kind !== Kind.FRAGMENT_DEFINITION);
  if (foreign) throw new InputError(`${where} holds a ${foreign.kind}: only operations and fragments can be registered`);
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  if (operations.length === 0) throw new InputError(`${where} holds no operation`);
  return operations.map((operation) => operation.name?.value ?? '(anonymous)');
}

/** A document whose identifier was computed elsewhere: the identifier must be the SHA-256 of its text. */
function withCheckedHash(id: string, body: string, where: string): TrustedDocument {
  const hash = hashOfDocumentId(id);
  if (hash === null) {
    throw new InputError(`${where}: "${id}" is not a SHA-256 document id; generate the manifest with SHA-256 hashes (GraphQL Code Generator: persistedDocuments.hashAlgorithm "sha256")`);
  }
  if (hash !== documentHash(body)) throw new InputError(`${where}: its id is not the SHA-256 of its text, so no client could send it by that id`);
  return { hash, body, operationNames: operationNamesOf(body, where) };
}

interface ApolloManifest {
  format: 'apollo-persisted-query-manifest';
  version: number;
  operations: Array<{ id?: unknown; name?: unknown; body?: unknown }>;
}

function isApolloManifest(value: unknown): value is ApolloManifest {
  return typeof value === 'object' && value !== null && (value as { format?: unknown }).format === 'apollo-persisted-query-manifest';
}

function fromJson(manifest: unknown, file: string): TrustedDocument[] {
  if (isApolloManifest(manifest)) {
    if (manifest.version !== 1 || !Array.isArray(manifest.operations)) throw new InputError(`${file}: only version 1 of Apollo's persisted query manifest is understood`);
    return manifest.operations.map((operation, index) => {
      const where = `${file}, operation ${typeof operation.name === 'string' ? JSON.stringify(operation.name) : index + 1}`;
      if (typeof operation.id !== 'string' || typeof operation.body !== 'string') throw new InputError(`${where} needs a string "id" and "body"`);
      return withCheckedHash(operation.id, operation.body, where);
    });
  }
  if (typeof manifest !== 'object' || manifest === null || Array.isArray(manifest)) {
    throw new InputError(`${file} is neither GraphQL Code Generator's persisted-documents.json (an object of hash → document) nor Apollo's persisted query manifest`);
  }
  return Object.entries(manifest).map(([id, body]) => {
    const where = `${file}, entry ${JSON.stringify(id)}`;
    if (typeof body !== 'string') throw new InputError(`${where} is not a document (a string)`);
    return withCheckedHash(id, body, where);
  });
}

/**
 * A file of operations: held whole when it holds one operation (registered byte for byte, as a
 * client sending the file sends it); else one document per operation, each printed by graphql-js
 * with the fragments it uses (the ids `documents add` prints are the ones to send).
 */
function fromGraphQL(text: string, file: string): TrustedDocument[] {
  const names = operationNamesOf(text, file);
  if (names.length === 1) return [{ hash: documentHash(text), body: text, operationNames: names }];
  if (names.some((name) => name === '(anonymous)')) throw new InputError(`${file} holds several operations: each must have a name`);
  return Object.entries(separateOperations(parse(text))).map(([name, document]) => {
    const body = print(document);
    return { hash: documentHash(body), body, operationNames: [name] };
  });
}

/**
 * The documents of a file given to `internal-token documents add`: GraphQL Code Generator's
 * client preset `persisted-documents.json`, Apollo's persisted query manifest (both `.json`), or
 * a file of GraphQL operations (any other name). Every document is checked before any is
 * registered.
 */
export function documentsFromFile(text: string, file: string): TrustedDocument[] {
  let documents: TrustedDocument[];
  // By the name: an anonymous GraphQL query starts with "{" as JSON does.
  if (file.toLowerCase().endsWith('.json')) {
    let manifest: unknown;
    try {
      manifest = JSON.parse(text);
    } catch (error) {
      throw new InputError(`${file} is not valid JSON: ${(error as Error).message}`);
    }
    documents = fromJson(manifest, file);
  } else {
    documents = fromGraphQL(text, file);
  }
  if (documents.length === 0) throw new InputError(`${file} holds no document`);
  return [...new Map(documents.map((document) => [document.hash, document])).values()];
}
