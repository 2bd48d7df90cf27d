import type { Queryable } from '../db/database.ts';
import type { ResourceRegistry } from '../model/resource-registry.ts';
import { PARENT_COLUMN, type GeneratedQuery, type ParameterSource } from '../sql/sql-builder.ts';
import { isoFromUtcText } from '../sql/timestamps.ts';
import type { ConnectionArguments } from './connection-arguments.ts';
import { filterKey } from './connection-arguments.ts';

export type Row = Record<string, unknown>;
export type RelationArguments = Record<string, unknown>;

/**
 * Rows of one-relations read together with their parent row (null: the parent has none). The
 * name cannot clash with a field: GraphQL reserves names that start with two underscores.
 */
export const EMBEDDED = '__embedded';
export type EmbeddingRow = Row & { [EMBEDDED]?: Record<string, Row | null> };

/** A connection's page read with its parent row, by its plan's loader key (a name GraphQL reserves, as `EMBEDDED`). */
export const PAGES = '__pages';
export type PagedRow = Row & { [PAGES]?: Record<string, Row[]> };

export interface Statement {
  query: GeneratedQuery;
  /** Makes the row object of one result row (read as an array of column values; a JSON page's row with its parent apart). */
  toRow: (values: unknown[], parent?: unknown) => EmbeddingRow;
}

/**
 * Statements depend only on the registry, on which arguments a field is given and on what is
 * selected under it, so they are generated once per process and shared by every request.
 */
const statementCache = new WeakMap<ResourceRegistry, Map<string, Statement>>();

export function cachedStatement(registry: ResourceRegistry, key: string, build: () => GeneratedQuery): Statement {
  let statements = statementCache.get(registry);
  if (!statements) {
    statements = new Map();
    statementCache.set(registry, statements);
  }
  let statement = statements.get(key);
  if (!statement) {
    const query = build();
    statement = { query, toRow: compileRow(query, query.pageAs === 'json' ? -1 : 0) };
    statements.set(key, statement);
  }
  return statement;
}

/**
 * Rows are read as arrays and turned into objects by a function compiled per statement with the
 * property names written out: every row of a statement then has one shape, built in one step,
 * and embedded one-relations are built inside it. (Adding a property to the driver's row objects
 * afterwards cost V8 a new hidden class per row, over a microsecond each.)
 */
export function compileRow(query: GeneratedQuery, offset = 0): (values: unknown[], parent?: unknown) => EmbeddingRow {
  const quote = (name: string) => JSON.stringify(name);
  // `offset`: the columns are read past it (a page's in a lookup's row), but the first (`__parent`);
  // -1: a JSON page's column array, which leaves `__parent` out, given apart.
  const index = new Map(query.columns.map((name, position) => [name, position === 0 ? 0 : position + offset]));
  const at = (name: string) => (offset === -1 && name === query.columns[0] ? 'parent' : `a[${index.get(name)}]`);
  const timestamps = new Set(query.timestamps);
  const fromText = query.fromText ?? {};
  const value = (name: string) => {
    if (timestamps.has(name)) return `iso(${at(name)})`;
    // A JSON page's columns are text (connection-sql.ts, `jsonPage`); null stays null.
    if (fromText[name] === 'int') return `(${at(name)} === null ? null : +${at(name)})`;
    if (fromText[name] === 'boolean') return `(${at(name)} === null ? null : ${at(name)} === 'true')`;
    return at(name);
  };
  const embeddedAliases = new Set(query.embeds.flatMap((embed) => embed.fields.map(([alias]) => alias)));
  const properties = query.columns.filter((name) => !embeddedAliases.has(name)).map((name) => `${quote(name)}: ${value(name)}`);
  if (query.embeds.length > 0) {
    const objects = query.embeds.map((embed) => {
      const fields = embed.fields.map(([alias, field]) => `${quote(field)}: ${value(alias)}`).join(', ');
      return `${quote(embed.relation)}: ${at(embed.keyAlias)} === null ? null : { ${fields} }`;
    });
    properties.push(`${quote(EMBEDDED)}: { ${objects.join(', ')} }`);
  }
  const build = new Function('iso', `return (a, parent) => ({ ${properties.join(', ')} });`) as (iso: typeof isoFromUtcText) => (values: unknown[], parent?: unknown) => EmbeddingRow;
  return build(isoFromUtcText);
}

/** What fills the parameters of a statement, besides fixed values. */
export interface Binding {
  workspaces?: readonly string[] | null | undefined;
  /** The values of the filter's conditions, by `field.operator`. */
  filterValues?: ReadonlyMap<string, unknown>;
  connection?: ConnectionArguments;
  limit?: number;
}

export function bind(parameters: readonly ParameterSource[], binding: Binding): unknown[] {
  return parameters.map((source) => {
    switch (source.from) {
      case 'workspaces':
        return binding.workspaces;
      case 'filter':
        return (binding.filterValues ?? binding.connection?.filterValues)?.get(filterKey(source.field, source.operator));
      case 'after':
        return binding.connection?.after?.[source.index];
      case 'before':
        return binding.connection?.before?.[source.index];
      case 'limit':
        return binding.limit;
    }
  });
}


const EMPTY: unknown[] = [];

/**
 * One statement for a batch of parent keys (its first parameter), the rows grouped by parent in
 * the keys' order, and how many rows the database returned.
 */
export async function readByParent(db: Queryable, statement: Statement, keys: readonly string[], values: readonly unknown[]): Promise<{ groups: Row[][]; rows: number }> {
  const rows = await db.queryArrays(statement.query.text, [keys, ...values]);
  if (statement.query.pageAs === 'json') return readJsonPages(statement, keys, rows);
  const byParent = new Map<string, Row[]>();
  for (let i = 0; i < rows.length; i += 1) {
    const row = statement.toRow(rows[i]!);
    // The column arrays can go as soon as their row objects exist (a large list is read once).
    rows[i] = EMPTY;
    const parentKey = String(row[PARENT_COLUMN]);
    let group = byParent.get(parentKey);
    if (!group) {
      group = [];
      byParent.set(parentKey, group);
    }
    group.push(row);
  }
  return { groups: keys.map((parentKey) => byParent.get(parentKey) ?? []), rows: rows.length };
}

/** How the page rows of a lookup's statement are read (lookup-page.ts). */
export interface PageReader {
  /** `rows`: page columns in the lookup's rows; `json`: a JSON array of column arrays at `at`. */
  as: 'rows' | 'json';
  toRow: (values: unknown[], parent?: unknown) => EmbeddingRow;
  /** `rows`: where the page row's key is (NULL: no page row); `json`: where the page's JSON is. */
  at: number;
  key: string;
}

/** The pages of a statement that reads each parent's as JSON (`pageAs: 'json'`): `[__parent, page]` per parent. */
function readJsonPages(statement: Statement, keys: readonly string[], rows: unknown[][]): { groups: Row[][]; rows: number } {
  const byParent = new Map<string, Row[]>();
  let read = 0;
  for (let i = 0; i < rows.length; i += 1) {
    const [parent, page] = rows[i]!;
    const parentKey = String(parent);
    let group = byParent.get(parentKey);
    if (!group) {
      group = [];
      byParent.set(parentKey, group);
    }
    const found = JSON.parse(page as string) as unknown[][];
    for (const columns of found) group.push(statement.toRow(columns, parent));
    read += found.length;
    rows[i] = EMPTY;
  }
  return { groups: keys.map((parentKey) => byParent.get(parentKey) ?? []), rows: read };
}

/**
 * Rows of a lookup that reads a page of each row found with it (`buildLookupWithPage`): per key,
 * its row (or none), holding the page's rows under `PAGES` by `pageKey`.
 */
export async function readWithPage(db: Queryable, statement: Statement, page: PageReader, keys: readonly string[], values: readonly unknown[]): Promise<{ groups: Row[][]; rows: number }> {
  const rows = await db.queryArrays(statement.query.text, [keys, ...values]);
  const byParent = new Map<string, PagedRow>();
  // Rows as two statements would have returned them: each row found, and each row of its page.
  let read = 0;
  for (let i = 0; i < rows.length; i += 1) {
    const values = rows[i]!;
    const parentKey = String(values[0]);
    let row = byParent.get(parentKey);
    if (!row) {
      row = statement.toRow(values) as PagedRow;
      row[PAGES] = { [page.key]: [] };
      byParent.set(parentKey, row);
      read += 1;
    }
    const pageRows = row[PAGES]![page.key]!;
    if (page.as === 'json') {
      for (const columns of JSON.parse(values[page.at] as string) as unknown[][]) pageRows.push(page.toRow(columns, values[0]));
      read += pageRows.length;
    } else if (values[page.at] !== null) {
      pageRows.push(page.toRow(values));
      read += 1;
    }
    rows[i] = EMPTY;
  }
  return { groups: keys.map((parentKey) => (byParent.has(parentKey) ? [byParent.get(parentKey)!] : [])), rows: read };
}
