import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getArgumentValues,
  getDirectiveValues,
  isObjectType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { listScan } from './list-scans.ts';
import { fieldDefinition, type ResourceDefinition, type ResourceRegistry } from '../../model/resource-registry.ts';
import { connectionOrder, embeddable } from '../../sql/sql-builder.ts';
import type { TableSizes } from './table-statistics-store.ts';
import { isApiError } from '../../errors.ts';
import { MAX_PAGE_SIZE, parseConnectionArguments } from '../../loaders/connection-arguments.ts';
import { connectionList } from '../../loaders/loaders.ts';
import type { ListIndex } from '../connections.ts';

/**
 * The unit of internal GraphQL's budgets (docs/internal-graphql.md, Cost budgets): a point is 10 µs
 * of database time. A request is estimated in points before it runs, from what its statements can
 * read, and charged the database time its statements took after it ran.
 */
export const POINT_MS = 0.01;

/**
 * What the estimate prices, in points. Measured on PostgreSQL 15 (bench/internal-load.ts): a
 * statement's round trip and planning about 0.15 ms; a row returned by an index about 10 µs; a row
 * read and tested or counted without being returned about 0.5 µs; a page (buffer) the read visits
 * about 1 µs more (inferred from nested counts' time, 1.5 µs a row an index walk reads). A list's rows read through an index lie each on a page of their own at worst
 * (rows written over time, many lists at once: a run's bookings are rarely neighbours), a table
 * read whole visits each of its pages once.
 */
export const PRICES = { statement: 15, rowReturned: 1, rowRead: 0.05, page: 0.1 } as const;

/** How much dearer PostgreSQL's planner deems a page an index visits than one read in turn (`random_page_cost`). */
const RANDOM_PAGE = 4;

/** One read of a request that its estimate prices: what a refusal names, largest first. */
export interface PricedRead {
  points: number;
  what: string;
}

export interface WorkEstimate {
  points: number;
  /** The reads beyond the rows returned: counts, and scans no index bounds. */
  reads: PricedRead[];
}

export interface WorkEstimateContext {
  schema: GraphQLSchema;
  registry: ResourceRegistry;
  index: ListIndex;
  sizes: TableSizes;
}

const count = (value: number) => Math.round(value).toLocaleString('en');

/**
 * The database work an operation can cost, priced by what each statement can read: one statement
 * per list and per one-relation that is not read with its parent (DataLoader batches every parent
 * of a field), each row it can return (a page holds `first` rows and one more, per parent row),
 * and the rows it may read without returning them: a `totalCount` counts every row of its parent
 * (PostgreSQL's statistics say how many the largest parent has), and a page whose filter or order
 * no index serves (the catalog's indexes, `listScan`) may read them all to find its rows.
 */
export function estimateWork(context: WorkEstimateContext, document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>): WorkEstimate {
  const { schema, registry, index, sizes } = context;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const reads: PricedRead[] = [];
  let points = 0;
  const add = (priced: number, what?: string) => {
    points += priced;
    if (what !== undefined) reads.push({ points: Math.round(priced), what });
  };

  /** The fields a selection set selects on `type`, through its fragments, with @skip and @include applied. */
  const fieldsOf = (set: SelectionSetNode, type: GraphQLObjectType, seen = new Set<string>()): FieldNode[] => {
    const fields: FieldNode[] = [];
    for (const selection of set.selections) {
      if (getDirectiveValues(GraphQLSkipDirective, selection, variables)?.if === true) continue;
      if (getDirectiveValues(GraphQLIncludeDirective, selection, variables)?.if === false) continue;
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (!selection.typeCondition || selection.typeCondition.name.value === type.name) fields.push(...fieldsOf(selection.selectionSet, type, seen));
      } else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment && fragment.typeCondition.name.value === type.name) fields.push(...fieldsOf(fragment.selectionSet, type, seen));
      }
    }
    return fields;
  };

  /** A page of `key` read for `parents` rows: its statement, its rows, and what it reads beyond them. */
  const connection = (key: string, owner: ResourceDefinition, relationName: string, node: FieldNode, type: GraphQLObjectType, parents: number) => {
    const relation = registry.relation(owner, relationName);
    const target = registry.get(relation.resource);
    const args = getArgumentValues(type.getFields()[node.name.value]!, node, variables);
    let size = target.maxPage ?? MAX_PAGE_SIZE;
    let filter: ReturnType<typeof parseConnectionArguments>['filter'] = [];
    try {
      ({ size, filter } = parseConnectionArguments(connectionList(owner, relationName), target, connectionOrder(registry, relation), args));
    } catch (error) {
      // The size limit refuses bad arguments with their own message; priced at the largest page meanwhile.
      if (!isApiError(error)) throw error;
    }
    const scan = listScan(registry, relation, filter);
    const column = fieldDefinition(target, relation.foreignField).column;
    const group = sizes.largestGroup(target.table, column);
    const perParent = scan.wholeTable ? sizes.rows(target.table) : group;
    // A page holds no more rows than its parent has.
    const page = Math.min(size, group);
    // Each row returned visits its page too.
    add(PRICES.statement + parents * (page + 1) * (PRICES.rowReturned + PRICES.page));
    const read = parents * perParent;
    // Each row read by an index walk visits its page; a whole table's rows share theirs.
    const perRow = PRICES.rowRead + PRICES.page * (scan.wholeTable ? sizes.pages(target.table) / Math.max(1, sizes.rows(target.table)) : 1);
    if (scan.wholeTable) add(read * perRow, `${key} reads the whole ${target.table} table (${count(read)} rows): no index of it starts with ${column}`);
    else if (!scan.orderedBy) add(read * perRow, `${key} reads and sorts up to ${count(read)} rows: no index of ${target.table} serves its order`);
    else if (scan.unserved.length > 0) {
      const columns = [...new Set(scan.unserved.map(([field]) => `${field} (${target.table}.${fieldDefinition(target, field).column})`))].join(', ');
      add(read * perRow, `${key} reads up to ${count(read)} rows to filter on ${columns}, which no index of ${target.table} serves after ${column}`);
    }
    const connectionType = schema.getType(`${target.name}Connection`);
    if (!node.selectionSet || !isObjectType(connectionType)) return;
    for (const field of fieldsOf(node.selectionSet, connectionType)) {
      const name = field.name.value;
      if (name === 'totalCount') {
        // Counting for many parents, PostgreSQL reads the whole table at once where walking each parent's
        // rows looks dearer to it, which is sooner than it is: it prices a page an index visits as 4 read in turn.
        const whole = sizes.rows(target.table) * PRICES.rowRead + sizes.pages(target.table) * PRICES.page;
        const walk = read * perRow;
        add(PRICES.statement + (whole <= walk * RANDOM_PAGE ? whole : walk), `totalCount of ${key} counts up to ${count(Math.min(read, sizes.rows(target.table)))} rows`);
      }
      else if ((name === 'nodes' || name === 'edges') && field.selectionSet) {
        const nodeType = schema.getType(target.name) as GraphQLObjectType;
        if (name === 'nodes') object(field.selectionSet, nodeType, target, parents * page, true);
        else {
          const edgeType = schema.getType(`${target.name}Edge`) as GraphQLObjectType;
          for (const edge of fieldsOf(field.selectionSet, edgeType)) if (edge.name.value === 'node' && edge.selectionSet) object(edge.selectionSet, nodeType, target, parents * page, true);
        }
      }
    }
  };

  /**
   * The fields of rows of `resource` read for `parents` rows; `embedding`: they were read by a
   * list's statement, which reads their selected one-relations with them (`embeddable`).
   */
  const object = (set: SelectionSetNode, type: GraphQLObjectType, resource: ResourceDefinition, parents: number, embedding: boolean) => {
    for (const field of fieldsOf(set, type)) {
      const name = field.name.value;
      const key = `${type.name}.${name}`;
      const list = index.connections.get(key);
      if (list) {
        connection(key, resource, list.relation, field, type, parents);
        continue;
      }
      const relation = resource.relations?.[name];
      if (!relation || relation.kind !== 'one' || !field.selectionSet) continue;
      if (!(embedding && embeddable(registry, resource, name))) add(PRICES.statement);
      const target = registry.get(relation.resource);
      // DataLoader reads each row once, however many parents point at it: no more than its table holds.
      const reached = Math.min(parents, Math.max(1, sizes.rows(target.table)));
      add(reached * (PRICES.rowReturned + PRICES.page));
      // A list's statement embeds its rows' one-relations, not theirs: each further one is a statement of its own.
      object(field.selectionSet, schema.getType(target.name) as GraphQLObjectType, target, reached, false);
    }
  };

  const query = schema.getQueryType()!;
  const roots = new Map(registry.all().flatMap((resource) => Object.keys(resource.roots ?? {}).map((name) => [name, resource] as const)));
  for (const field of fieldsOf(operation.selectionSet, query)) {
    const resource = roots.get(field.name.value);
    if (!resource || !field.selectionSet) continue;
    add(PRICES.statement + PRICES.rowReturned);
    object(field.selectionSet, schema.getType(resource.name) as GraphQLObjectType, resource, 1, false);
  }
  // The same read asked several times (aliases) is named once, with how many times.
  const byWhat = new Map<string, { points: number; times: number }>();
  for (const read of reads) {
    const seen = byWhat.get(read.what) ?? { points: 0, times: 0 };
    byWhat.set(read.what, { points: seen.points + read.points, times: seen.times + 1 });
  }
  const named = [...byWhat].map(([what, { points: priced, times }]) => ({ points: priced, what: times > 1 ? `${what}, ${times} times` : what }));
  return { points: Math.ceil(points), reads: named.sort((a, b) => b.points - a.points) };
}
