import type { CatalogCheck, CatalogColumn } from '../model/catalog.ts';

/**
 * The statements that write rows of any table from its catalog, as the fixture import uses them:
 * every value travels as a parameter (an array per column), every name and type comes from the
 * catalog, never from input.
 */

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`Not a plain SQL identifier: ${name}`);
  return name;
}

/** `INSERT … SELECT * FROM unnest($1::type[], …)`: one statement for every row, a parameter per column. */
export function insertRowsSql(table: string, columns: readonly CatalogColumn[]): string {
  const names = columns.map((column) => identifier(column.name));
  const arrays = columns.map((column, index) => `$${index + 1}::${arrayType(column)}`);
  return `INSERT INTO ${identifier(table)} (${names.join(', ')}) SELECT * FROM unnest(${arrays.join(', ')})`;
}

/** `count` new keys, each from the key column's default (`new_id('ses')`), so that rows can name each other before they are written. */
export function newKeysSql(keyDefault: string): string {
  return `SELECT ${keyDefault} AS key FROM generate_series(1, $1::int)`;
}

/**
 * Which of the given rows (a parameter per column, as `insertRowsSql` takes them) each rule
 * refuses: a boolean column per rule, true where the rule's expression is false, the rows in
 * their order. The rules are the catalog's, over the table's own column names.
 */
export function refusedRowsSql(columns: readonly CatalogColumn[], checks: readonly CatalogCheck[]): string {
  const arrays = columns.map((column, index) => `$${index + 1}::${arrayType(column)}`);
  const names = columns.map((column) => identifier(column.name));
  const refused = checks.map((check, index) => `(${check.expression}) IS FALSE AS refused_${index}`);
  return `SELECT ${refused.join(', ')} FROM unnest(${arrays.join(', ')}) WITH ORDINALITY AS r(${names.join(', ')}, ordinality) ORDER BY ordinality`;
}

/** An array of the column's type: `text[]`, `timestamp with time zone[]`, an enum's `booking_status[]`. */
function arrayType(column: CatalogColumn): string {
  if (!/^[a-z_][a-z0-9_ ]*(\(\d+(,\d+)?\))?$/.test(column.type)) throw new Error(`Not a plain SQL type: ${column.type}`);
  return `${column.type}[]`;
}
