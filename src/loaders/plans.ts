/** A connection's page, and the plans the loaders make once per field and request (loaders.ts). */
import type { RelationDefinition, ResourceDefinition } from '../db/resource-registry.ts';
import type { ConnectionOrderTerm } from '../db/sql-builder.ts';
import type { ConnectionArguments } from './connection-arguments.ts';
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
  count?: RelationPlan;
}
