import { CODE_TABLE } from '../db/database-code.ts';
import type { Queryable } from '../db/database.ts';

/**
 * What PostgreSQL's catalog says of the service's tables, read from a migrated database: the one
 * source of tables, columns, types, nullability, keys, foreign keys, enums, rules and their
 * descriptions (`COMMENT ON`). `npm run generate` writes it to `catalog.generated.ts`, which the
 * resource registry is derived from (with the overlay, `overlay.ts`, for what the catalog cannot say).
 */
export interface Catalog {
  /** The migrations the database had applied, in order: a build is current while they are the shipped ones. */
  migrations: string[];
  tables: Record<string, CatalogTable>;
  enums: Record<string, CatalogEnum>;
}

export interface CatalogTable {
  description?: string;
  /** In the table's column order. */
  columns: CatalogColumn[];
  primaryKey: string[];
  foreignKeys: CatalogForeignKey[];
  /** Unique constraints and unique indexes: on columns (`columns`) or on expressions (`columns: null`). */
  uniques: CatalogUnique[];
  checks: CatalogCheck[];
  /**
   * Every index of the table, the primary key's and the unique ones' included: what the cost of a
   * list is judged by (a filter or an order an index serves reads its rows, not the table).
   */
  indexes: CatalogIndex[];
}

export interface CatalogColumn {
  name: string;
  /** As `format_type` writes it: `text`, `integer`, `timestamp with time zone`, an enum's name. */
  type: string;
  /** The column's type is this enum. */
  enum?: string;
  nullable: boolean;
  /** The default's expression, as `pg_get_expr` writes it. */
  default?: string;
  description?: string;
}

export interface CatalogForeignKey {
  name: string;
  columns: string[];
  table: string;
  references: string[];
  description?: string;
}

export interface CatalogUnique {
  name: string;
  /** Null for a unique index on expressions. */
  columns: string[] | null;
  /** A partial index: unique only among the rows of its predicate. */
  partial: boolean;
  description?: string;
}

export interface CatalogIndex {
  name: string;
  /** Its key columns in order, each with `DESC` when descending; null for an index on expressions. */
  columns: string[] | null;
  /** A partial index's predicate, as `pg_get_expr` writes it. */
  where?: string;
}

export interface CatalogCheck {
  name: string;
  columns: string[];
  /** The rule as `pg_get_expr` writes it, over the table's own column names. */
  expression: string;
  description?: string;
}

export interface CatalogEnum {
  values: string[];
  description?: string;
}

/** Tables that hold the migration tools' own state, not the service's data. */
const TOOL_TABLES = ['schema_migrations', CODE_TABLE];

const TABLES = `
  SELECT c.relname AS table, obj_description(c.oid, 'pg_class') AS description
    FROM pg_class c
   WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relname = ANY($1)
   ORDER BY 1`;

const COLUMNS = `
  SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
         CASE WHEN t.typtype = 'e' THEN t.typname END AS enum, NOT a.attnotnull AS nullable,
         pg_get_expr(d.adbin, d.adrelid) AS default, col_description(c.oid, a.attnum) AS description
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_type t ON t.oid = a.atttypid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relname = ANY($1)
     AND a.attnum > 0 AND NOT a.attisdropped
   ORDER BY c.relname, a.attnum`;

/** Column names of a constraint's or index's attribute numbers, in their order (0: an expression). */
const CONSTRAINTS = `
  SELECT c.relname AS table, k.conname AS name, k.contype AS kind,
         ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY AS u(n, i) JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i) AS columns,
         f.relname AS foreign_table,
         ARRAY(SELECT a.attname::text FROM unnest(k.confkey) WITH ORDINALITY AS u(n, i) JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i) AS foreign_columns,
         pg_get_expr(k.conbin, k.conrelid) AS expression,
         obj_description(k.oid, 'pg_constraint') AS description
    FROM pg_constraint k
    JOIN pg_class c ON c.oid = k.conrelid
    LEFT JOIN pg_class f ON f.oid = k.confrelid
   WHERE c.relnamespace = current_schema()::regnamespace AND NOT c.relname = ANY($1) AND k.contype IN ('p', 'f', 'u', 'c')
   ORDER BY c.relname, k.conname`;

/** Unique indexes no constraint stands for (a unique constraint's index is the constraint). */
const UNIQUE_INDEXES = `
  SELECT c.relname AS table, i.relname AS name,
         CASE WHEN 0 = ANY(x.indkey::int2[]) THEN NULL
              ELSE ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS u(n, o) JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = u.n ORDER BY u.o) END AS columns,
         x.indpred IS NOT NULL AS partial, obj_description(i.oid, 'pg_class') AS description
    FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid
    JOIN pg_class c ON c.oid = x.indrelid
   WHERE c.relnamespace = current_schema()::regnamespace AND NOT c.relname = ANY($1) AND x.indisunique
     AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid)
   ORDER BY c.relname, i.relname`;

/** Every index, key columns in order (`DESC` written after a descending one). */
const INDEXES = `
  SELECT c.relname AS table, i.relname AS name,
         CASE WHEN 0 = ANY(x.indkey::int2[]) THEN NULL
              ELSE ARRAY(SELECT a.attname::text || CASE WHEN x.indoption[u.o - 1] & 1 = 1 THEN ' DESC' ELSE '' END
                           FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS u(n, o) JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = u.n
                          WHERE u.o <= x.indnkeyatts ORDER BY u.o) END AS columns,
         pg_get_expr(x.indpred, x.indrelid) AS predicate
    FROM pg_index x
    JOIN pg_class i ON i.oid = x.indexrelid
    JOIN pg_class c ON c.oid = x.indrelid
   WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relname = ANY($1)
   ORDER BY c.relname, i.relname`;

const ENUMS = `
  SELECT t.typname AS name, ARRAY(SELECT e.enumlabel::text FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) AS values,
         obj_description(t.oid, 'pg_type') AS description
    FROM pg_type t
   WHERE t.typnamespace = current_schema()::regnamespace AND t.typtype = 'e'
   ORDER BY 1`;

const described = <T extends object>(value: T, description: string | null): T => (description ? { ...value, description } : value);

/** The catalog of a migrated database, in a stable order (the same database gives the same value). */
export async function readCatalog(db: Queryable): Promise<Catalog> {
  const migrations = await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
  const tables: Record<string, CatalogTable> = {};
  for (const row of (await db.query<{ table: string; description: string | null }>(TABLES, [TOOL_TABLES])).rows) {
    tables[row.table] = described({ columns: [], primaryKey: [], foreignKeys: [], uniques: [], checks: [], indexes: [] }, row.description);
  }
  type ColumnRow = { table: string; name: string; type: string; enum: string | null; nullable: boolean; default: string | null; description: string | null };
  for (const row of (await db.query<ColumnRow>(COLUMNS, [TOOL_TABLES])).rows) {
    const column: CatalogColumn = { name: row.name, type: row.type, ...(row.enum ? { enum: row.enum } : {}), nullable: row.nullable, ...(row.default !== null ? { default: row.default } : {}) };
    tables[row.table]!.columns.push(described(column, row.description));
  }
  type ConstraintRow = {
    table: string;
    name: string;
    kind: 'p' | 'f' | 'u' | 'c';
    columns: string[];
    foreign_table: string | null;
    foreign_columns: string[];
    expression: string | null;
    description: string | null;
  };
  for (const row of (await db.query<ConstraintRow>(CONSTRAINTS, [TOOL_TABLES])).rows) {
    const table = tables[row.table]!;
    if (row.kind === 'p') table.primaryKey = row.columns;
    else if (row.kind === 'f') table.foreignKeys.push(described({ name: row.name, columns: row.columns, table: row.foreign_table!, references: row.foreign_columns }, row.description));
    else if (row.kind === 'u') table.uniques.push(described({ name: row.name, columns: row.columns, partial: false }, row.description));
    else table.checks.push(described({ name: row.name, columns: row.columns, expression: row.expression! }, row.description));
  }
  type IndexRow = { table: string; name: string; columns: string[] | null; partial: boolean; description: string | null };
  for (const row of (await db.query<IndexRow>(UNIQUE_INDEXES, [TOOL_TABLES])).rows) {
    tables[row.table]!.uniques.push(described({ name: row.name, columns: row.columns, partial: row.partial }, row.description));
  }
  for (const table of Object.values(tables)) table.uniques.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const row of (await db.query<{ table: string; name: string; columns: string[] | null; predicate: string | null }>(INDEXES, [TOOL_TABLES])).rows) {
    tables[row.table]!.indexes.push({ name: row.name, columns: row.columns, ...(row.predicate !== null ? { where: row.predicate } : {}) });
  }
  const enums: Record<string, CatalogEnum> = {};
  for (const row of (await db.query<{ name: string; values: string[]; description: string | null }>(ENUMS)).rows) {
    enums[row.name] = described({ values: row.values }, row.description);
  }
  return { migrations: migrations.rows.map((row) => row.name), tables, enums };
}

/**
 * The source of `catalog.generated.ts`: the catalog as a typed constant whose value is JSON
 * (`parseCatalogModule` reads it back), a line per column, key, rule and enum.
 */
export function catalogModule(catalog: Catalog): string {
  const json = (value: unknown) => JSON.stringify(value);
  const list = (items: readonly unknown[], indent: string) => (items.length === 0 ? '[]' : `[\n${items.map((item) => `${indent}  ${json(item)}`).join(',\n')}\n${indent}]`);
  const tables = Object.entries(catalog.tables).map(([name, table]) => {
    const lines = [
      ...(table.description ? [`      "description": ${json(table.description)}`] : []),
      `      "columns": ${list(table.columns, '      ')}`,
      `      "primaryKey": ${json(table.primaryKey)}`,
      ...(['foreignKeys', 'uniques', 'checks', 'indexes'] as const).map((key) => `      ${json(key)}: ${list(table[key], '      ')}`),
    ];
    return `    ${json(name)}: {\n${lines.join(',\n')}\n    }`;
  });
  const enums = Object.entries(catalog.enums).map(([name, value]) => `    ${json(name)}: ${json(value)}`);
  return [
    '// Generated by `npm run generate` from the migrated database (src/model/catalog.ts); do not edit.',
    "import type { Catalog } from './catalog.ts';",
    '',
    'export const catalog: Catalog = {',
    `  "migrations": ${list(catalog.migrations, '  ')},`,
    `  "tables": {\n${tables.join(',\n')}\n  },`,
    `  "enums": {\n${enums.join(',\n')}\n  }`,
    '};',
    '',
  ].join('\n');
}

/** The catalog a `catalog.generated.ts` text holds, or null when the text is not of that form. */
export function parseCatalogModule(text: string): Catalog | null {
  const start = text.indexOf('export const catalog: Catalog = ');
  const end = text.lastIndexOf('};');
  if (start < 0 || end < start) return null;
  try {
    return JSON.parse(text.slice(start + 'export const catalog: Catalog = '.length, end + 1)) as Catalog;
  } catch {
    return null;
  }
}

/**
 * What differs between two catalogs, a line per table, column, key or value, each naming where:
 * `tables` limits the comparison to those tables, `structure` to what a statement depends on
 * (columns, types, nullability, keys and enum values; not descriptions, defaults or rules).
 */
export function catalogDifferences(expected: Catalog, actual: Catalog, options: { tables?: readonly string[]; structure?: boolean } = {}): string[] {
  const lines: string[] = [];
  if (!options.structure) {
    const missing = expected.migrations.filter((name) => !actual.migrations.includes(name));
    const extra = actual.migrations.filter((name) => !expected.migrations.includes(name));
    if (missing.length > 0) lines.push(`migrations not applied: ${missing.join(', ')}`);
    if (extra.length > 0) lines.push(`migrations not known: ${extra.join(', ')}`);
  }
  const names = options.tables ?? [...new Set([...Object.keys(expected.tables), ...Object.keys(actual.tables)])].sort();
  for (const name of names) {
    const [a, b] = [expected.tables[name], actual.tables[name]];
    if (!a || !b) {
      lines.push(`table ${name}: ${a ? 'missing' : 'not expected'}`);
      continue;
    }
    const columns = new Set([...a.columns.map((c) => c.name), ...b.columns.map((c) => c.name)]);
    for (const column of columns) {
      const [x, y] = [a.columns.find((c) => c.name === column), b.columns.find((c) => c.name === column)];
      if (!x || !y) lines.push(`column ${name}.${column}: ${x ? 'missing' : 'not expected'}`);
      else if (x.type !== y.type) lines.push(`column ${name}.${column}: of type ${y.type}, expected ${x.type}`);
      else if (x.nullable !== y.nullable) lines.push(`column ${name}.${column}: ${y.nullable ? 'nullable' : 'not null'}, expected ${x.nullable ? 'nullable' : 'not null'}`);
      else if (!options.structure && JSON.stringify(x) !== JSON.stringify(y)) lines.push(`column ${name}.${column}: its default or description differs`);
    }
    const keys = (table: CatalogTable) => [JSON.stringify(table.primaryKey), ...table.foreignKeys.map((k) => `${k.name}: (${k.columns.join(', ')}) → ${k.table} (${k.references.join(', ')})`)];
    const [keysA, keysB] = [keys(a), keys(b)];
    for (const key of keysA) if (!keysB.includes(key)) lines.push(`table ${name}: key ${key} missing`);
    for (const key of keysB) if (!keysA.includes(key)) lines.push(`table ${name}: key ${key} not expected`);
    if (!options.structure && JSON.stringify([a.description, a.uniques, a.checks, a.foreignKeys]) !== JSON.stringify([b.description, b.uniques, b.checks, b.foreignKeys])) {
      lines.push(`table ${name}: its description, unique keys or rules differ`);
    }
    if (!options.structure) {
      const indexes = (table: CatalogTable) => (table.indexes ?? []).map((index) => `${index.name} (${index.columns?.join(', ') ?? 'expressions'})${index.where ? ` WHERE ${index.where}` : ''}`);
      const [indexesA, indexesB] = [indexes(a), indexes(b)];
      for (const index of indexesA) if (!indexesB.includes(index)) lines.push(`table ${name}: index ${index} missing`);
      for (const index of indexesB) if (!indexesA.includes(index)) lines.push(`table ${name}: index ${index} not expected`);
    }
  }
  const enumNames = new Set([...Object.keys(expected.enums), ...Object.keys(actual.enums)]);
  for (const name of enumNames) {
    const [a, b] = [expected.enums[name], actual.enums[name]];
    if (options.tables && !options.tables.some((table) => expected.tables[table]?.columns.some((c) => c.enum === name))) continue;
    if (!a || !b) lines.push(`enum ${name}: ${a ? 'missing' : 'not expected'}`);
    else if (a.values.join() !== b.values.join()) lines.push(`enum ${name}: values ${b.values.join(', ')}, expected ${a.values.join(', ')}`);
    else if (!options.structure && a.description !== b.description) lines.push(`enum ${name}: its description differs`);
  }
  return lines;
}
