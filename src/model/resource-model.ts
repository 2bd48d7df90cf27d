import type { Catalog, CatalogColumn, CatalogTable } from './catalog.ts';
import { indexesOf } from './indexes.ts';
import { links, type Link } from './links.ts';
import { camelCase, lowerFirst, nearest, pascalCase, typeName } from './naming.ts';
import { checkPersonalColumns, markPersonalColumns } from './personal-columns.ts';
import { ResourceRegistry, type FieldDefinition, type FieldType, type OrderTerm, type RelationDefinition, type ResourceDefinition } from './resource-registry.ts';

/** What the overlay says of one table (src/model/overlay.ts). */
export interface TableOverlay {
  /** The GraphQL type of its rows; the table's name in singular PascalCase (`course_runs` → `CourseRun`) when omitted. */
  type?: string;
  /** `false`: not served on internal GraphQL; the fixture import still writes it. */
  graphql?: false;
  /** `false`: never written by the fixture import (rows only the service writes); still served. */
  fixture?: false;
  /** Columns not served. */
  hide?: string[];
  /** Column → field name, for a field not named after its column in camelCase. */
  rename?: Record<string, string>;
  /**
   * How a row reaches its workspace, which restricted tokens are limited by: its `workspace_id`
   * column when omitted, another column, the foreign key column of a row that has one
   * (`{ through: 'booking_id' }`), or `null` for data of no workspace.
   */
  workspace?: string | { through: string } | null;
  /**
   * Personal data: `true` for the whole table (every column), or the personal columns
   * (`['email']`). Only tokens with the personal-data grant read them, and the audit trail names
   * them when read (docs/internal-graphql.md).
   */
  personalData?: boolean | string[];
  /** The order of lists of these rows: columns, `-` before one for descending; the key is added last. */
  order?: string[];
  /** `Query.<root>(<key>)` looks one row up: the type's name in camelCase when omitted; `false` for none. */
  root?: string | false;
  /** Relations from foreign keys, by the name they get: renamed (a string) or not served (`false`). */
  relations?: Record<string, string | false>;
  /** Lists of this row's rows of another table that only some rows join: those whose `by` column is set, in its order. */
  lists?: Record<string, { of: string; by: string }>;
  /** The largest page of a connection of these rows (100 when omitted). */
  maxPage?: number;
  /** Fields (and relations, by their served names) marked `@deprecated`, each with the reason internal teams read. */
  deprecated?: Record<string, string>;
}

export type Overlay = Record<string, TableOverlay>;

/** The files the model's facts come from, named in its messages. */
export const MODEL_SOURCES = { overlay: 'src/model/overlay.ts', catalog: 'src/model/catalog.generated.ts' } as const;

/** Every disagreement between the catalog and the overlay, each naming the file, the table and the field. */
export class ModelError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`The catalog and the overlay disagree:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ModelError';
  }
}

/** One table the overlay serves: its fields, relations and workspace, derived from the catalog. */
export interface TableModel {
  table: string;
  type: string;
  overlay: TableOverlay;
  catalog: CatalogTable;
  /** Served fields by name. */
  fields: Record<string, FieldDefinition>;
  /** The field of each served column. */
  fieldOf: ReadonlyMap<string, string>;
  /** Relations by the name they are served under. */
  relations: ReadonlyMap<string, Link>;
  key: string;
  /** The order of lists of these rows, the key last. */
  order: OrderTerm[];
}

/** An enum of the catalog as GraphQL serves it: each value by its GraphQL name (`PUBLIC_PAGE` for `public_page`). */
export interface EnumModel {
  values: ReadonlyMap<string, string>;
  description?: string;
}

export interface ResourceModel {
  catalog: Catalog;
  tables: ReadonlyMap<string, TableModel>;
  /** The enums served fields hold, by GraphQL name. */
  enums: ReadonlyMap<string, EnumModel>;
  /** The tables served on internal GraphQL, as the loaders and SQL generation read them. */
  registry: ResourceRegistry;
}

const SCALARS: Record<string, FieldType> = {
  text: 'string',
  'character varying': 'string',
  character: 'string',
  uuid: 'string',
  integer: 'int',
  smallint: 'int',
  numeric: 'float',
  real: 'float',
  'double precision': 'float',
  boolean: 'boolean',
  'timestamp with time zone': 'timestamp',
};

/** The type of a column's field; null for a type the service cannot serve (the overlay must hide it). */
function fieldType(column: CatalogColumn, isReference: boolean): FieldType | null {
  if (column.enum) return 'enum';
  const base = SCALARS[column.type.replace(/\(.*\)$/, '')];
  if (base === 'string' && isReference) return 'id';
  return base ?? null;
}

/**
 * The tables of the overlay as served resources, derived from the catalog. Every disagreement
 * (a name the catalog lacks, a column of a type that cannot be served, a relation no foreign key
 * gives, a table whose rows reach no workspace) is collected and thrown as one `ModelError`.
 */
export function deriveModel(catalog: Catalog, overlay: Overlay): ResourceModel {
  const problems: string[] = [];
  const at = (table: string, what: string) => problems.push(`${MODEL_SOURCES.overlay}: ${table}: ${what}`);
  const missingColumn = (table: string, where: string, column: string) => {
    const columns = catalog.tables[table]!.columns.map((c) => c.name);
    const guess = nearest(column, columns);
    at(table, `${where} names the column "${column}", which ${MODEL_SOURCES.catalog} does not list for ${table}${guess ? ` (did you mean "${guess}"?)` : ` (its columns: ${columns.join(', ')})`}`);
  };

  const served = Object.keys(overlay).filter((table) => {
    if (catalog.tables[table]) return true;
    const guess = nearest(table, Object.keys(catalog.tables));
    at(table, `${MODEL_SOURCES.catalog} has no table "${table}"${guess ? ` (did you mean "${guess}"?)` : ''}: add its migration and run npm run generate`);
    return false;
  });
  const typeOf = new Map(served.map((table) => [table, overlay[table]!.type ?? typeName(table)]));
  const { links: allLinks, composite } = links(catalog, served, typeOf);
  for (const key of composite) {
    if (overlay[key.owner]!.relations?.[key.name] !== false) {
      at(key.owner, `the foreign key ${key.foreignKey} has several columns and cannot be a relation: hide it (relations: { ${key.name}: false })`);
    }
  }

  const tables = new Map<string, TableModel>();
  for (const table of served) {
    const entry = overlay[table]!;
    const source = catalog.tables[table]!;
    const has = (column: string) => source.columns.some((c) => c.name === column);
    for (const column of [...(entry.hide ?? []), ...Object.keys(entry.rename ?? {})]) if (!has(column)) missingColumn(table, entry.hide?.includes(column) ? 'hide' : 'rename', column);
    const references = new Set([...(source.primaryKey.length === 1 ? source.primaryKey : []), ...allLinks.filter((l) => l.owner === table && l.direction === 'forward').map((l) => l.localColumn)]);
    const fields: Record<string, FieldDefinition> = {};
    const fieldOf = new Map<string, string>();
    for (const column of source.columns) {
      if (entry.hide?.includes(column.name)) continue;
      const name = entry.rename?.[column.name] ?? camelCase(column.name);
      const type = fieldType(column, references.has(column.name) || column.name === 'workspace_id');
      if (type === null) {
        at(table, `the column "${column.name}" is of type ${column.type}, which the service cannot serve: hide it`);
        continue;
      }
      if (fields[name]) at(table, `the columns "${fields[name].column}" and "${column.name}" are both served as "${name}": rename one`);
      fields[name] = {
        column: column.name,
        type,
        ...(column.nullable ? { nullable: true } : {}),
        ...(column.enum ? { enumType: pascalCase(column.enum) } : {}),
        ...(column.description ? { description: column.description } : {}),
      };
      fieldOf.set(column.name, name);
    }
    if (source.primaryKey.length !== 1) at(table, `${MODEL_SOURCES.catalog} gives ${table} ${source.primaryKey.length === 0 ? 'no primary key' : 'a primary key of several columns'}; a served table needs one key column`);
    const key = fieldOf.get(source.primaryKey[0] ?? '') ?? '';
    const model: TableModel = { table, type: typeOf.get(table)!, overlay: entry, catalog: source, fields, fieldOf, relations: new Map(), key, order: [] };
    markPersonalColumns(model, at, (column) => missingColumn(table, 'personalData', column));
    model.order = orderOf(model, entry.order ?? [], (column) => missingColumn(table, 'order', column));
    tables.set(table, model);
  }

  for (const model of tables.values()) {
    const entry = model.overlay;
    const relations = model.relations as Map<string, Link>;
    const own = allLinks.filter((link) => link.owner === model.table);
    for (const name of Object.keys(entry.relations ?? {})) {
      if (!own.some((link) => link.name === name)) {
        at(model.table, `relations names "${name}", which no foreign key gives ${model.table} (its relations: ${own.map((l) => l.name).join(', ') || 'none'}): a relation needs a foreign key in a migration`);
      }
    }
    for (const link of own) {
      const renamed = entry.relations?.[link.name];
      if (renamed === false) continue;
      const name = renamed ?? link.name;
      if (relations.has(name) || model.fields[name]) at(model.table, `"${name}" is both ${relations.has(name) ? 'a relation' : 'a field'} and the relation of ${link.foreignKey}: rename one in relations`);
      relations.set(name, { ...link, name });
    }
    for (const [name, list] of Object.entries(entry.lists ?? {})) {
      const through = allLinks.filter((link) => link.owner === model.table && link.table === list.of && link.kind === 'many');
      const target = tables.get(list.of);
      if (!target || through.length !== 1) {
        at(model.table, `lists.${name}: ${target ? `${through.length} foreign keys of ${list.of} reference ${model.table}; a list needs exactly one` : `${list.of} is not a table of the overlay`}`);
        continue;
      }
      const column = target.catalog.columns.find((c) => c.name === list.by);
      if (!column) missingColumn(list.of, `${model.table}.lists.${name}.by`, list.by);
      else if (!column.nullable) at(model.table, `lists.${name}: ${list.of}.${list.by} is never null, so the list would hold every row: serve the relation ${through[0]!.name} instead`);
      else relations.set(name, { ...through[0]!, name, present: list.by, order: [list.by], ...(column.description ? { description: column.description } : {}) });
    }
  }

  checkPersonalColumns(tables, allLinks, at);
  for (const model of tables.values()) {
    for (const name of Object.keys(model.overlay.deprecated ?? {})) {
      if (!model.fields[name] && !model.relations.has(name)) at(model.table, `deprecated names "${name}", which is neither a served field nor a relation of ${model.type}`);
    }
  }
  const definitions = [...tables.values()].map((model) => resourceOf(model, tables, at, missingColumn));
  const enums = new Map<string, EnumModel>();
  for (const model of tables.values()) {
    for (const column of model.catalog.columns) {
      if (!column.enum || !model.fieldOf.has(column.name) || model.overlay.graphql === false) continue;
      const source = catalog.enums[column.enum]!;
      const values = new Map(source.values.map((value) => [value.toUpperCase(), value]));
      for (const value of values.keys()) if (!/^[_A-Z][_0-9A-Z]*$/.test(value)) at(model.table, `the enum ${column.enum} of ${column.name} has the value "${values.get(value)}", which GraphQL cannot name`);
      enums.set(pascalCase(column.enum), { values, ...(source.description ? { description: source.description } : {}) });
    }
  }
  if (problems.length > 0) throw new ModelError(problems);
  const registry = new ResourceRegistry(definitions.filter((definition) => tables.get(definition.table)!.overlay.graphql !== false));
  registry.validate();
  return { catalog, tables, enums, registry };
}

type Report = (table: string, what: string) => void;

function resourceOf(model: TableModel, tables: ReadonlyMap<string, TableModel>, at: Report, missingColumn: (table: string, where: string, column: string) => void): ResourceDefinition {
  const entry = model.overlay;
  const definition: ResourceDefinition = {
    name: model.type,
    table: model.table,
    key: model.key,
    fields: Object.fromEntries(
      Object.entries(model.fields).map(([name, field]) => [name, entry.deprecated?.[name] ? { ...field, deprecated: entry.deprecated[name] } : field]),
    ),
    ...(model.catalog.description ? { description: model.catalog.description } : {}),
    ...(entry.personalData === true ? { personalData: true } : {}),
    ...(entry.maxPage ? { maxPage: entry.maxPage } : {}),
  };
  const workspace = entry.workspace === undefined ? (model.fieldOf.has('workspace_id') ? 'workspace_id' : undefined) : entry.workspace;
  if (workspace === undefined) {
    at(model.table, 'has no workspace_id column: say how its rows reach a workspace (workspace: a column, { through: a foreign key column }, or null for data of no workspace)');
  } else if (typeof workspace === 'string') {
    if (model.fieldOf.has(workspace)) definition.workspaceField = model.fieldOf.get(workspace)!;
    else missingColumn(model.table, 'workspace', workspace);
  } else if (workspace === null) {
    definition.workspaceField = null;
  } else {
    const link = [...model.relations.values()].find((l) => l.direction === 'forward' && l.localColumn === workspace.through);
    if (!link) at(model.table, `workspace.through names "${workspace.through}", which is not the column of a served foreign key of ${model.table}`);
    else definition.workspaceThrough = { field: model.fieldOf.get(link.localColumn)!, resource: tables.get(link.table)!.type };
  }
  if (entry.root !== false && definition.workspaceField !== undefined) {
    definition.roots = { [entry.root ?? lowerFirst(model.type)]: { argument: model.key } };
  }
  const indexes = indexesOf(model);
  if (indexes.length > 0) definition.indexes = indexes;
  const relations: Record<string, RelationDefinition> = {};
  for (const [name, link] of model.relations) {
    const target = tables.get(link.table)!;
    if (target.overlay.graphql === false || entry.graphql === false) continue;
    const local = model.fieldOf.get(link.localColumn);
    const foreign = target.fieldOf.get(link.foreignColumn);
    if (!local || !foreign) {
      at(model.table, `the relation ${name} needs the columns ${model.table}.${link.localColumn} and ${link.table}.${link.foreignColumn} served`);
      continue;
    }
    const relation: RelationDefinition = { resource: target.type, kind: link.kind, localField: local, foreignField: foreign };
    if (link.kind === 'one' && link.optional) relation.optional = true;
    if (link.description) relation.description = link.description;
    if (entry.deprecated?.[name]) relation.deprecated = entry.deprecated[name];
    if (link.kind === 'many') {
      relation.orderBy = link.order ? orderOf(target, link.order, (column) => missingColumn(link.table, `${model.table}.lists.${name}.by`, column)) : target.order;
      if (link.present) relation.present = target.fieldOf.get(link.present)!;
    }
    relations[name] = relation;
  }
  if (Object.keys(relations).length > 0) definition.relations = relations;
  return definition;
}

/** Order columns as field terms, then the key in the last term's direction, so that every row has one place. */
function orderOf(model: TableModel, columns: readonly string[], missing: (column: string) => void): OrderTerm[] {
  const terms: OrderTerm[] = [];
  for (const spec of columns) {
    const column = spec.replace(/^-/, '');
    const field = model.fieldOf.get(column);
    if (!field) {
      missing(column);
      continue;
    }
    terms.push({ field, direction: spec.startsWith('-') ? 'desc' : 'asc' });
  }
  if (!terms.some((term) => term.field === model.key)) terms.push({ field: model.key, direction: terms.at(-1)?.direction ?? 'asc' });
  return terms;
}
