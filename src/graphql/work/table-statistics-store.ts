import type { Database } from '../../db/database.ts';

/** What PostgreSQL's statistics say of a table: its rows, and the largest group one value of a column holds. */
export interface TableSizes {
  /** Rows of the table, as the planner estimates them now. */
  rows(table: string): number;
  /** The most rows of `table` that one value of `column` holds: the most a parent row can have (every row when unknown). */
  largestGroup(table: string, column: string): number;
  /** Pages of the table on disk, as the last VACUUM or ANALYZE counted them (every row a page of its own when unknown). */
  pages(table: string): number;
  /** Changes whenever the sizes may have: what was estimated from earlier sizes is estimated again. */
  readonly generation?: number;
}

interface ColumnShare {
  /** The share of the rows the most common value holds. */
  share: number;
}

/**
 * The sizes of the served tables, read from PostgreSQL's statistics: rows as the planner estimates
 * them (EXPLAIN, which scales the last ANALYZE to the table's current size, or estimates from its
 * size on disk when it was never analyzed), and from `pg_stats` the share of the most common
 * value of each column (or one over its distinct values). A column without statistics (never
 * analyzed: the embedded database has no autovacuum) counts as one value holding every row.
 */
export class TableStatistics implements TableSizes {
  readonly #tables: readonly string[];
  #rows = new Map<string, number>();
  #pages = new Map<string, number>();
  #shares = new Map<string, ColumnShare>();
  #generation = 0;

  get generation(): number {
    return this.#generation;
  }

  constructor(tables: readonly string[]) {
    this.#tables = tables;
  }

  rows(table: string): number {
    return this.#rows.get(table) ?? 0;
  }

  pages(table: string): number {
    const known = this.#pages.get(table) ?? 0;
    return known > 0 ? Math.min(known, this.rows(table)) : this.rows(table);
  }

  largestGroup(table: string, column: string): number {
    const rows = this.rows(table);
    const share = this.#shares.get(`${table}.${column}`)?.share ?? 1;
    return Math.min(rows, Math.ceil(rows * share));
  }

  /**
   * Reads them again; until it succeeds the previous reading stands. On the pool itself, not seen by
   * the statement observers (`onQuery`): it is the service's housekeeping, not a request's work.
   */
  async refresh(db: Pick<Database, 'pool'>): Promise<void> {
    const rows = new Map<string, number>();
    for (const table of this.#tables) {
      // Table names come from the catalog (plain identifiers, checked by the registry).
      const plan = (await db.pool.query<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(`EXPLAIN (FORMAT JSON) SELECT 1 FROM ${table}`)).rows[0]!;
      rows.set(table, Math.round(plan['QUERY PLAN'][0]!.Plan['Plan Rows']));
    }
    const found = await db.pool.query<{ table: string; column: string; n_distinct: number; top: number | null }>(
      `SELECT tablename AS table, attname AS column, n_distinct, most_common_freqs[1] AS top
         FROM pg_stats WHERE schemaname = current_schema() AND tablename = ANY($1)`,
      [this.#tables],
    );
    const sized = await db.pool.query<{ table: string; pages: number }>(
      `SELECT relname AS table, relpages AS pages FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' AND relname = ANY($1)`,
      [this.#tables],
    );
    const shares = new Map<string, ColumnShare>();
    for (const row of found.rows) {
      const total = rows.get(row.table) ?? 0;
      const distinct = row.n_distinct > 0 ? row.n_distinct : row.n_distinct < 0 ? -row.n_distinct * total : 0;
      const share = row.top ?? (distinct >= 1 ? 1 / distinct : 1);
      shares.set(`${row.table}.${row.column}`, { share: Math.min(1, share) });
    }
    this.#rows = rows;
    this.#shares = shares;
    this.#pages = new Map(sized.rows.map((row) => [row.table, Number(row.pages)]));
    this.#generation += 1;
  }
}
