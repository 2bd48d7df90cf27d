/** A connection's page, and the plans the loaders make once per field and request (loaders.ts). */
import type { RelationDefinition, ResourceDefinition } from '../model/resource-registry.ts';
import { orderColumn, type ConnectionOrderTerm, type ConnectionQueryOptions } from '../sql/sql-builder.ts';
import type { ConnectionArguments } from './connection-arguments.ts';
import { encodeCursor } from './cursor.ts';
import type { Row, Statement } from './statements.ts';

/** One page of a connection for one parent row, in the list's order. */
export interface Page {
  rows: Row[];
  /** Exact when paging forward (`first`); false when paging backward, as Relay allows. */
  hasNextPage: boolean;
  /** Exact when paging backward (`last`); false when paging forward, as Relay allows. */
  hasPreviousPage: boolean;
  cursor(row: Row): string;
  /** Every row of the parent that the filter lets through (a statement of its own, batched, read only when asked for). */
  totalCount(): Promise<number>;
}

/** What one relation field of one execution needs: planned once, used for every parent row. */
export interface RelationPlan {
  relation: RelationDefinition;
  statement: Statement;
  values: unknown[];
  loaderKey: string;
  /** The key of its statement among the process's (its shape, no request value). */
  statementKey: string;
  /** The personal columns its statement reads or compares (`table.column`). */
  personal: readonly string[];
}

/** A connection field of one execution: its statement, checked arguments and the list's order. */
export interface ConnectionPlan extends RelationPlan {
  parent: ResourceDefinition;
  relationName: string;
  list: string;
  order: readonly ConnectionOrderTerm[];
  args: ConnectionArguments;
  /** Whether its statement reads the order's values, of which cursors are made (only when one is selected). */
  cursors: boolean;
  /** What its statement was generated from, for a lookup that reads the page with its row. */
  query: ConnectionQueryOptions;
  count?: RelationPlan;
}

/** A page of `found`, the rows read for one parent (one past the page tells whether another follows). */
export function pageOf(plan: ConnectionPlan, found: Row[], totalCount: () => Promise<number>): Page {
  const { size, backward } = plan.args;
  const more = found.length > size;
  // A copy: the loader hands the same array to every ask for the same parent key.
  const rows = found.slice(0, size);
  if (backward) rows.reverse();
  return {
    rows,
    hasNextPage: !backward && more,
    hasPreviousPage: backward && more,
    cursor: (row) => {
      if (!plan.cursors) throw new Error(`${plan.list}: a cursor was asked of a page read without them`);
      return encodeCursor(plan.list, plan.order.map((_, index) => row[orderColumn(index)]));
    },
    totalCount,
  };
}
