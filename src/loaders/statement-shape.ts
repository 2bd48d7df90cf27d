import type { ResourceDefinition, ResourceRegistry } from '../model/resource-registry.ts';
import { embeddable, type ConnectionQueryOptions } from '../sql/sql-builder.ts';
import type { ConnectionArguments } from './connection-arguments.ts';
import type { PersonalAccess } from './personal-access.ts';

/** What a relation's statement reads of its target, and the key of that shape among the process's statements. */
export interface Shape {
  embeds: string[];
  /** The fields read of each embedded relation, where they are not all of them (personal ones not selected). */
  embeddedFields: Record<string, string[]>;
  fields: string[] | undefined;
  key: string;
  /** The personal columns the statement reads (`table.column`), keys included. */
  personal: string[];
}

/**
 * What a statement reads of the target, given the names selected under the field: only those
 * fields (and the local fields of its relations, which resolve from them), and its selected
 * one-relations that can be read in the same statement. Everything but personal fields when
 * nothing says. A personal field is read only when selected, and never without the grant.
 */
export function statementShape(registry: ResourceRegistry, personal: PersonalAccess, target: ResourceDefinition, selected: ReadonlySet<string> | undefined): Shape {
  if (!selected) {
    const fields = personal.fieldsToRead(target, undefined, () => false);
    return { embeds: [], embeddedFields: {}, fields, key: fields ? `[]{${fields.join(',')}}` : '[]{*}', personal: personal.columns(target, [target.key, ...(fields ?? [])]) };
  }
  const embeds = Object.keys(target.relations ?? {}).filter((name) => selected.has(name) && embeddable(registry, target, name));
  // A relation's own column is read only when the relation is selected: every resource has a
  // `workspace` relation, and its column on each of 100,000 session rows is memory for nothing.
  const local = Object.entries(target.relations ?? {})
    .filter(([name]) => selected.has(name))
    .map(([, nested]) => nested.localField);
  const wanted = Object.keys(target.fields).filter((field) => selected.has(field) || local.includes(field));
  const fields = personal.fieldsToRead(target, wanted, (field) => selected.has(field)) ?? wanted;
  const columns = personal.columns(target, [target.key, ...fields]);
  // An embedded row is read whole, but for its personal fields: those only when selected under it.
  const embeddedFields: Record<string, string[]> = {};
  for (const name of embeds) {
    const joined = registry.get(registry.relation(target, name).resource);
    const read = personal.fieldsToRead(joined, undefined, (field) => selected.has(`${name}.${field}`));
    if (read) embeddedFields[name] = read;
    columns.push(...personal.columns(joined, [joined.key, ...(read ?? [])]));
  }
  const embedKey = embeds.map((name) => `${name}${embeddedFields[name] ? `{${embeddedFields[name].join(',')}}` : ''}`);
  return { embeds, embeddedFields, fields, key: `[${embedKey.join(',')}]{${fields.join(',')}}`, personal: columns };
}

const nullPattern = (values: readonly unknown[] | undefined) => values?.map((value) => value === null);

/**
 * What a connection's statement is generated from, and its shape among the process's statements:
 * the page's direction, which cursor values are NULL, the filter's conditions, whether cursors are
 * read, and what it reads of the target (`statementShape`).
 */
export function connectionStatement(shaped: Shape, parsed: ConnectionArguments, cursors: boolean, restricted: boolean): { shape: string; query: ConnectionQueryOptions } {
  const after = nullPattern(parsed.after);
  const before = nullPattern(parsed.before);
  const shape = [
    parsed.backward ? 'last' : 'first',
    `after(${after?.map(Number).join('') ?? '-'})`,
    `before(${before?.map(Number).join('') ?? '-'})`,
    `filter(${parsed.filter.map((term) => term.join('.')).join(',')})`,
    cursors ? 'cursors' : 'no-cursors',
    shaped.key,
  ].join(':');
  const query: ConnectionQueryOptions = {
    embedded: shaped.embeds,
    embeddedFields: shaped.embeddedFields,
    fields: shaped.fields ?? [],
    filter: parsed.filter,
    ...(after ? { after } : {}),
    ...(before ? { before } : {}),
    backward: parsed.backward,
    cursors,
    restricted,
  };
  return { shape, query };
}
