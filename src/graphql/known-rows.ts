import { EMBEDDED, type EmbeddingRow, type Row } from '../loaders/statements.ts';

/**
 * A known row (see `KnownRows`) that carries the rows of some of its one-relations too (null: it
 * has none), so that an operation selecting them reads nothing either: a row kept from an earlier
 * moment is then answered as it was, relations included.
 */
export function withOneRelations(row: Row, relations: Readonly<Record<string, Row | null>>): Row {
  const known: EmbeddingRow = { ...row, [EMBEDDED]: { ...relations } };
  return known;
}
