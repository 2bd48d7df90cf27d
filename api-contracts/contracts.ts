import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CriticalityLevel, diff } from '@graphql-inspector/core';
import { compareSpecs } from '@useoptic/openapi-utilities';
import { parseOpenAPIWithSourcemap } from '@useoptic/openapi-io';
import { RuleRunner } from '@useoptic/rulesets-base';
import { BreakingChangesRuleset } from '@useoptic/standard-rulesets';
import { buildSchema } from 'graphql';
import { parse as parseYaml } from 'yaml';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Where the contracts and their released versions live (docs/versioning.md, Breaking changes). */
export const CONTRACT_FILES = {
  /** The internal schema the service serves, printed: written by `npm run generate` (schema/generated-files.ts). */
  servedSchema: here('../schema/internal.graphql'),
  releasedSchema: here('./released/internal-graphql.graphql'),
  openapi: here('../openapi/public-v1.yaml'),
  releasedOpenapi: here('./released/public-v1.yaml'),
  acknowledgements: here('./breaking-changes.yaml'),
};

export type ContractFiles = typeof CONTRACT_FILES;

export const RELEASED_SCHEMA_HEADER = '# The internal GraphQL schema as last released, copied by `npm run api:release`. Do not edit.\n\n';

/** A breaking change one of the differs found, as the check reports it and a reviewer acknowledges it. */
export interface BreakingChange {
  contract: 'graphql' | 'openapi';
  /** graphql: @graphql-inspector's change type (FIELD_REMOVED …); openapi: Optic's rule name. */
  kind: string;
  /** graphql: the schema coordinate (Type.field); openapi: Optic's "where" (method, path, part). */
  at: string;
  message: string;
}

/**
 * The breaking changes of the internal schema since the released one, by GraphQL Inspector: a
 * removed type, field, argument or enum value, a changed type, a new required argument, … (its
 * BREAKING criticality; DANGEROUS changes, such as a new enum value, are not refused).
 */
export async function graphqlBreakingChanges(releasedSdl: string, currentSdl: string): Promise<BreakingChange[]> {
  const changes = await diff(buildSchema(releasedSdl), buildSchema(currentSdl));
  return changes
    .filter((change) => change.criticality.level === CriticalityLevel.Breaking)
    .map((change) => ({ contract: 'graphql', kind: change.type, at: change.path ?? '', message: change.message }));
}

/**
 * The breaking changes of the public contract since the released document, by Optic's breaking
 * changes ruleset: a removed path or operation, a removed response property or status, a response
 * property made optional or retyped, a new required parameter, a narrowed enum, …
 */
export async function openapiBreakingChanges(releasedFile: string, currentFile: string): Promise<BreakingChange[]> {
  // The same two documents give the same answer: Optic takes a second or two per comparison.
  const key = createHash('sha256').update(await readFile(releasedFile)).update('\u0000').update(await readFile(currentFile)).digest('hex');
  let pending = compared.get(key);
  if (!pending) {
    pending = compareOpenapi(releasedFile, currentFile);
    compared.set(key, pending);
    pending.catch(() => compared.delete(key));
  }
  return pending;
}

const compared = new Map<string, Promise<BreakingChange[]>>();

async function compareOpenapi(releasedFile: string, currentFile: string): Promise<BreakingChange[]> {
  const load = async (file: string) => {
    const { jsonLike, sourcemap } = await parseOpenAPIWithSourcemap(file);
    if (!('openapi' in jsonLike)) throw new Error(`${file} is not an OpenAPI 3 document`);
    return { jsonLike, sourcemap, isEmptySpec: false };
  };
  const compared = await compareSpecs(await load(releasedFile), await load(currentFile), new RuleRunner([new BreakingChangesRuleset()]), {});
  return compared.results
    .filter((result) => !result.passed && !result.exempted)
    .map((result) => ({ contract: 'openapi', kind: result.name ?? 'breaking change', at: result.where, message: result.error ?? result.where }));
}

/** A breaking change a reviewer accepted, with the reason (api-contracts/breaking-changes.yaml). */
export interface Acknowledgement {
  contract: 'graphql' | 'openapi';
  kind: string;
  at: string;
  reason: string;
}

/** The acknowledgement file, each entry checked: a malformed one is an error naming it. */
export function parseAcknowledgements(text: string, file: string): Acknowledgement[] {
  const parsed = (parseYaml(text) ?? {}) as Record<string, unknown>;
  const problems: string[] = [];
  const entries: Acknowledgement[] = [];
  for (const key of Object.keys(parsed)) if (key !== 'graphql' && key !== 'openapi') problems.push(`${file}: unknown section "${key}" (graphql or openapi)`);
  for (const contract of ['graphql', 'openapi'] as const) {
    const list = parsed[contract] ?? [];
    if (!Array.isArray(list)) {
      problems.push(`${file}: "${contract}" must be a list`);
      continue;
    }
    list.forEach((entry: Record<string, unknown> | null, index) => {
      const where = `${file}: ${contract}[${index}]`;
      const { kind, at, reason } = entry ?? {};
      if (typeof kind !== 'string' || typeof at !== 'string') problems.push(`${where} needs "kind" and "at", as the check printed them`);
      else if (typeof reason !== 'string' || reason.trim() === '') problems.push(`${where} (${kind} at ${at}) needs a "reason" a reviewer can read`);
      else entries.push({ contract, kind, at, reason });
    });
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return entries;
}

/** What the check finds: breaking changes nobody acknowledged, and acknowledgements no change needs any more. */
export interface CheckResult {
  unacknowledged: BreakingChange[];
  stale: Acknowledgement[];
  acknowledged: BreakingChange[];
}

const keyOf = (item: { contract: string; kind: string; at: string }) => `${item.contract}\u0000${item.kind}\u0000${item.at}`;

/** Compares both contracts with their released versions and the changes with their acknowledgements. */
export async function checkContracts(files: ContractFiles = CONTRACT_FILES): Promise<CheckResult> {
  const [releasedSdl, servedSdl, acknowledgementText] = await Promise.all([
    readFile(files.releasedSchema, 'utf8'),
    readFile(files.servedSchema, 'utf8'),
    readFile(files.acknowledgements, 'utf8'),
  ]);
  const changes = [...(await graphqlBreakingChanges(releasedSdl, servedSdl)), ...(await openapiBreakingChanges(files.releasedOpenapi, files.openapi))];
  const acknowledgements = parseAcknowledgements(acknowledgementText, files.acknowledgements);
  const accepted = new Set(acknowledgements.map(keyOf));
  const found = new Set(changes.map(keyOf));
  return {
    unacknowledged: changes.filter((change) => !accepted.has(keyOf(change))),
    stale: acknowledgements.filter((acknowledgement) => !found.has(keyOf(acknowledgement))),
    acknowledged: changes.filter((change) => accepted.has(keyOf(change))),
  };
}

/** The check's verdict as a reviewer reads it: each problem named, with the entry that would acknowledge it. */
export function describeProblems(result: CheckResult, files: ContractFiles = CONTRACT_FILES): string[] {
  const shown = (file: string) => relative(process.cwd(), file);
  const released = { graphql: shown(files.releasedSchema), openapi: shown(files.releasedOpenapi) };
  return [
    ...result.unacknowledged.map(
      (change) =>
        `Breaking change to the ${change.contract === 'graphql' ? 'internal GraphQL schema' : 'public OpenAPI contract'} since ${released[change.contract]}: ${change.message} ` +
        `(${change.kind} at ${change.at}). Undo it, or acknowledge it in ${shown(files.acknowledgements)} under ${change.contract}: ` +
        `{ kind: ${JSON.stringify(change.kind)}, at: ${JSON.stringify(change.at)}, reason: "…" }`,
    ),
    ...result.stale.map(
      (acknowledgement) => `${shown(files.acknowledgements)} acknowledges ${acknowledgement.kind} at ${acknowledgement.at} (${acknowledgement.contract}), which no longer happens: remove the entry`,
    ),
  ];
}
