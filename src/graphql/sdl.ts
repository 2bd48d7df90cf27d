import type { ResourceModel } from '../model/resource-model.ts';
import { fieldDefinition, personalFields, type ResourceDefinition } from '../model/resource-registry.ts';
import { connectionField, connectionFieldName, connectionTypeName, filterTypeName, leafTypeOf, listTypes, type ConnectionField, type ListIndex, type PlainListField } from './connections.ts';

export interface GeneratedSdl {
  typeDefs: string;
  index: ListIndex;
}

const describe = (text: string | undefined, indent = '') => (text ? `${indent}${JSON.stringify(text.trim())}\n` : '');

const QUERY_DESCRIPTION =
  'The internal graph of the course-booking platform. Every public REST answer is resolved through it; internal teams query it directly at /graphql on the internal listener.';

// Its description is the scalar's own (schema.ts, DateTime).
const DATE_TIME = 'scalar DateTime';

/**
 * The whole schema, generated from the resource model (the catalog with the overlay): a type per
 * served table with a field per served column (its type, nullability and description from the
 * catalog), a field per relation (a `one` as the row or null, a `many` as its connection), a root
 * per table with one, the enums its columns hold, and the filter and connection types of every
 * list. Each `many` relation also gets a field that returns every row at once: the fixed
 * operations of the public API read whole lists (the course list has no pages), and internal
 * GraphQL never serves those fields (`internalSchema`).
 */
export function generateSdl(model: Pick<ResourceModel, 'registry' | 'enums'>): GeneratedSdl {
  const { registry } = model;
  const connections = new Map<string, ConnectionField>();
  const plainLists = new Map<string, PlainListField>();
  const definitions = [DATE_TIME];
  const roots: string[] = [];
  for (const resource of registry.all()) {
    const personal = personalFields(resource);
    const fields = Object.keys(resource.fields).map((name) => {
      const field = fieldDefinition(resource, name);
      const description = joined(field.description, personal.has(name) && !resource.personalData ? PERSONAL_FIELD : undefined);
      return `${describe(description, '  ')}  ${name}: ${leafTypeOf(field)}${field.nullable ? '' : '!'}${deprecation(field.deprecated)}`;
    });
    for (const [name, relation] of Object.entries(resource.relations ?? {})) {
      if (relation.kind === 'one') {
        fields.push(`${describe(oneDescription(registry.get(relation.resource), relation.description, relation.optional), '  ')}  ${name}: ${relation.resource}${relation.optional ? '' : '!'}${deprecation(relation.deprecated)}`);
        continue;
      }
      connections.set(`${resource.name}.${connectionFieldName(name)}`, { resource: resource.name, relation: name });
      plainLists.set(`${resource.name}.${name}`, { resource: resource.name, relation: name, connectionField: connectionFieldName(name) });
      const lead = listDescription(relation.resource, relation.present, relation.description);
      fields.push(
        `${describe(`${lead}Every row at once, for the public API's fixed operations; internal GraphQL pages through ${connectionFieldName(name)}.`, '  ')}` +
          `  ${name}(filter: ${filterTypeName(relation.resource)}): [${relation.resource}!]!`,
        connectionField(registry, resource, name, lead) + deprecation(relation.deprecated),
      );
    }
    definitions.push(`${describe(joined(resource.description, resource.personalData ? PERSONAL_TYPE : undefined))}type ${resource.name} {\n${fields.join('\n')}\n}`);
    for (const [name, root] of Object.entries(resource.roots ?? {})) {
      roots.push(`  ${JSON.stringify(`The ${resource.name} of this ${root.argument}; null when there is none (or, for a token restricted to workspaces, when it is another workspace's).`)}\n  ${name}(${root.argument}: ID!): ${resource.name}`);
    }
  }
  definitions.unshift(`${describe(QUERY_DESCRIPTION)}type Query {\n${roots.join('\n')}\n}`);
  for (const [name, enumeration] of [...model.enums].sort(([a], [b]) => (a < b ? -1 : 1))) {
    definitions.push(`${describe(enumeration.description)}enum ${name} {\n${[...enumeration.values.keys()].map((value) => `  ${value}`).join('\n')}\n}`);
  }
  definitions.push(...listTypes(registry, new Set(model.enums.keys())));
  const connectionTypes = new Set(registry.all().map((resource) => connectionTypeName(resource.name)));
  return { typeDefs: definitions.join('\n\n'), index: { connections, connectionTypes, plainLists } };
}

/** What the schema says of personal data (docs/internal-graphql.md, Personal data). */
const PERSONAL_FIELD = 'Personal data: only tokens with the personal-data grant may select it or filter on it.';
const PERSONAL_TYPE = 'Only tokens with the personal-data grant may select it: every field is personal data.';

const joined = (...parts: Array<string | undefined>) => parts.map((part) => part?.trim()).filter(Boolean).join(' ') || undefined;

const deprecation = (reason: string | undefined) => (reason ? ` @deprecated(reason: ${JSON.stringify(reason)})` : '');

function oneDescription(target: ResourceDefinition, description: string | undefined, optional: boolean | undefined): string | undefined {
  const parts = [description, target.personalData ? 'Personal data: read from its own table only when selected.' : undefined, optional ? 'Null when there is none.' : undefined];
  const text = parts.filter(Boolean).join(' ');
  return text || undefined;
}

function listDescription(target: string, present: string | undefined, description: string | undefined): string {
  if (present === undefined) return description ? `${description.trim()}\n` : '';
  return `The ${target} rows whose ${present} is set, in its order.${description ? ` ${present}: ${description.trim()}` : ''}\n`;
}
