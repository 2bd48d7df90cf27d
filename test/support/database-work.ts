import type { Database } from '../../src/db/database.ts';
import { PRICES } from '../../src/graphql/work/estimate.ts';
import { serviceModel } from '../../src/model/service-model.ts';

/** One statement as sent, with its parameters. */
export interface SentStatement {
  text: string;
  values: readonly unknown[];
}

/** The database work of some statements, counted by PostgreSQL's EXPLAIN ANALYZE, and priced (docs/internal-graphql.md, How the estimate is made). */
export interface DatabaseWork {
  statements: number;
  /** Rows the statements hand back: what their LIMITs let through, or their result rows. */
  returned: number;
  /** Rows their scans read: those they passed on and those their filters removed, each loop. */
  read: number;
  /** Buffers (pages) their plans touched, hit or read. */
  pages: number;
  points: number;
}

interface PlanNode {
  'Node Type': string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

const SCANS = new Set(['Seq Scan', 'Index Scan', 'Index Only Scan', 'Bitmap Heap Scan']);
const served = new RegExp(`\\bFROM (${serviceModel()
  .registry.all()
  .map((resource) => resource.table)
  .join('|')}) `);

/** Sends every statement through `db` while `work` runs, with its parameters, to `into`. */
export async function recordStatements(db: Database, into: SentStatement[], work: () => Promise<unknown>): Promise<void> {
  const stop = db.onQuery((text, values) => into.push({ text, values: values ?? [] }));
  try {
    await work();
  } finally {
    stop();
  }
}

/**
 * The work of the statements that read served tables (a request's reads; not its token's lookup
 * or its budget's store), each run again under `EXPLAIN (ANALYZE, BUFFERS)`: what PostgreSQL
 * counted, which the machine's load does not change, priced as the estimate prices it.
 */
export async function databaseWork(db: Database, sent: readonly SentStatement[]): Promise<DatabaseWork> {
  const work: DatabaseWork = { statements: 0, returned: 0, read: 0, pages: 0, points: 0 };
  for (const { text, values } of sent) {
    if (!text.startsWith('SELECT') || !served.test(text)) continue;
    const result = await db.pool.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, values as unknown[]);
    const top = result.rows[0]!['QUERY PLAN'][0]!.Plan;
    work.statements += 1;
    let limited = 0;
    let limits = 0;
    const walk = (node: PlanNode) => {
      const loops = node['Actual Loops'] ?? 1;
      const rows = (node['Actual Rows'] ?? 0) * loops;
      if (node['Node Type'] === 'Limit') {
        limited += rows;
        limits += 1;
      }
      if (SCANS.has(node['Node Type'])) work.read += rows + ((node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * loops;
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(top);
    work.returned += limits > 0 ? limited : (top['Actual Rows'] ?? 0);
    // A node's buffers include its children's: the top node's are the statement's.
    work.pages += (top['Shared Hit Blocks'] ?? 0) + (top['Shared Read Blocks'] ?? 0);
  }
  work.points = Math.round(work.statements * PRICES.statement + work.returned * PRICES.rowReturned + work.read * PRICES.rowRead + work.pages * PRICES.page);
  return work;
}
