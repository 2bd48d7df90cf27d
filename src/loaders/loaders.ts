import DataLoader from 'dataloader';
import type { Queryable } from '../db/database.ts';
import type { RelationDefinition, ResourceDefinition, ResourceRegistry } from '../db/resource-registry.ts';
import {
  COUNT_COLUMN,
  PARENT_COLUMN,
  buildConnectionQuery,
  buildCountQuery,
  buildLookup,
  buildRelationQuery,
  connectionOrder,
  embeddable,
  orderColumn,
  type ConnectionOrderTerm,
  type GeneratedQuery,
  type ParameterSource,
} from '../db/sql-builder.ts';
import { isoFromUtcText } from '../db/timestamps.ts';
import { ApiError } from '../errors.ts';
import { filterKey, parseConnectionArguments, type ConnectionArguments } from './connection-arguments.ts';
import { encodeCursor } from './cursor.ts';

export type Row = Record<string, unknown>;
export type RelationArguments = Record<string, unknown>;

export interface LoaderOptions {
  /**
   * The workspaces a restricted token may read: every statement that reads a resource carrying a
   * workspace (see `ResourceDefinition.workspaceField`) reads only rows of these, so that another
   * workspace's row is missing exactly as if it did not exist. Absent: every workspace.
   */
  workspaces?: readonly string[] | null | undefined;
}

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

/**
 * Rows of one-relations read together with their parent row (null: the parent has none). The
 * name cannot clash with a field: GraphQL reserves names that start with two underscores.
 */
const EMBEDDED = '__embedded';
type EmbeddingRow = Row & { [EMBEDDED]?: Record<string, Row | null> };

interface Statement {
  query: GeneratedQuery;
  /** Makes the row object of one result row (read as an array of column values). */
  toRow: (values: unknown[]) => EmbeddingRow;
}

/**
 * Statements depend only on the registry, on which arguments a field is given and on what is
 * selected under it, so they are generated once per process and shared by every request.
 */
const statementCache = new WeakMap<ResourceRegistry, Map<string, Statement>>();

function cachedStatement(registry: ResourceRegistry, key: string, build: () => GeneratedQuery): Statement {
  let statements = statementCache.get(registry);
  if (!statements) {
    statements = new Map();
    statementCache.set(registry, statements);
  }
  let statement = statements.get(key);
  if (!statement) {
    const query = build();
    statement = { query, toRow: compileRow(query) };
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
function compileRow(query: GeneratedQuery): (values: unknown[]) => EmbeddingRow {
  const quote = (name: string) => JSON.stringify(name);
  const index = new Map(query.columns.map((name, position) => [name, position]));
  const timestamps = new Set(query.timestamps);
  const value = (name: string) => (timestamps.has(name) ? `iso(a[${index.get(name)}])` : `a[${index.get(name)}]`);
  const embeddedAliases = new Set(query.embeds.flatMap((embed) => embed.fields.map(([alias]) => alias)));
  const properties = query.columns.filter((name) => !embeddedAliases.has(name)).map((name) => `${quote(name)}: ${value(name)}`);
  if (query.embeds.length > 0) {
    const objects = query.embeds.map((embed) => {
      const fields = embed.fields.map(([alias, field]) => `${quote(field)}: ${value(alias)}`).join(', ');
      return `${quote(embed.relation)}: a[${index.get(embed.keyAlias)}] === null ? null : { ${fields} }`;
    });
    properties.push(`${quote(EMBEDDED)}: { ${objects.join(', ')} }`);
  }
  const build = new Function('iso', `return (a) => ({ ${properties.join(', ')} });`) as (iso: typeof isoFromUtcText) => (values: unknown[]) => EmbeddingRow;
  return build(isoFromUtcText);
}

/** What one relation field of one execution needs: planned once, used for every parent row. */
interface RelationPlan {
  relation: RelationDefinition;
  statement: Statement;
  values: unknown[];
  loaderKey: string;
}

/** A connection field of one execution: its statement, checked arguments and the list's order. */
interface ConnectionPlan extends RelationPlan {
  parent: ResourceDefinition;
  relationName: string;
  list: string;
  order: readonly ConnectionOrderTerm[];
  args: ConnectionArguments;
  count?: RelationPlan;
}

/** What fills the parameters of a statement, besides fixed values. */
interface Binding {
  workspaces?: readonly string[] | null | undefined;
  args?: RelationArguments;
  connection?: ConnectionArguments;
  limit?: number;
}

function bind(parameters: readonly ParameterSource[], binding: Binding): unknown[] {
  return parameters.map((source) => {
    switch (source.from) {
      case 'fixed':
        return source.value;
      case 'workspaces':
        return binding.workspaces;
      case 'argument':
        return binding.args?.[source.name];
      case 'filter':
        return binding.connection?.filterValues.get(filterKey(source.field, source.operator));
      case 'after':
        return binding.connection?.after?.[source.index];
      case 'before':
        return binding.connection?.before?.[source.index];
      case 'limit':
        return binding.limit;
    }
  });
}

const nullPattern = (values: readonly unknown[] | undefined) => values?.map((value) => value === null);

/**
 * A field's selection set is one object per field and execution (see `relation`), and the
 * field's arguments follow from the same execution: the plan is made once per field and
 * execution, not once per parent row.
 */
const plans = new WeakMap<ReadonlySet<string>, WeakMap<RelationDefinition, RelationPlan>>();
const connectionPlans = new WeakMap<ReadonlySet<string>, WeakMap<RelationDefinition, ConnectionPlan>>();
const EMPTY: unknown[] = [];

/**
 * One set of DataLoaders per request, generated from the registry: every relation of every parent
 * in a query level is fetched with one statement, whatever the number of parents.
 */
export class Loaders {
  readonly #loaders = new Map<string, DataLoader<string, Row[]>>();
  readonly #registry: ResourceRegistry;
  readonly #db: Queryable;
  readonly #workspaces: readonly string[] | null;
  #rowsRead = 0;

  constructor(registry: ResourceRegistry, db: Queryable, options: LoaderOptions = {}) {
    this.#registry = registry;
    this.#db = db;
    this.#workspaces = options.workspaces ?? null;
  }

  /** Rows the database returned to this request's statements so far. */
  get rowsRead(): number {
    return this.#rowsRead;
  }

  get #restricted(): boolean {
    return this.#workspaces !== null;
  }

  /**
   * Makes a row already read elsewhere (a key's workspace, read with the key) the answer to the
   * lookup of its key, so that it is not read again.
   */
  prime(resourceName: string, row: Row): void {
    if (this.#restricted) return;
    const resource = this.#registry.get(resourceName);
    const by = resource.key;
    const statement = cachedStatement(this.#registry, `lookup:${resource.name}.${by}`, () => buildLookup(resource, by));
    this.#loader(`lookup:${resource.name}.${by}`, statement, [], true).prime(String(row[by]), [row]);
  }

  /** One row of `resourceName` whose `field` (its key by default) equals `value`. */
  async lookup(resourceName: string, value: string, field?: string): Promise<Row | null> {
    const resource = this.#registry.get(resourceName);
    const by = field ?? resource.key;
    const key = `lookup:${resource.name}.${by}${this.#restricted ? ':restricted' : ''}`;
    const statement = cachedStatement(this.#registry, key, () => buildLookup(resource, by, this.#restricted));
    const values = bind(statement.query.parameters, { workspaces: this.#workspaces });
    const rows = await this.#loader(key, statement, values, true).load(value);
    return rows[0] ?? null;
  }

  /**
   * The rows of `parent.relationName` for one parent row. Given the names selected under the
   * field, only those fields are read, and selected one-relations of the target that are
   * `embeddable` are read in the same statement as the target rows. The caller passes the same
   * set object for every parent row of one field in one execution (plans are kept per set).
   */
  relation(parent: ResourceDefinition, relationName: string, row: Row, args: RelationArguments, selected?: ReadonlySet<string>): Row[] | Promise<Row[]> {
    const embedded = (row as EmbeddingRow)[EMBEDDED]?.[relationName];
    if (embedded !== undefined) return embedded === null ? [] : [embedded];
    const plan = selected ? this.#memoizedPlan(parent, relationName, args, selected) : this.#plan(parent, relationName, args, undefined);
    const parentValue = row[plan.relation.localField];
    if (parentValue === null || parentValue === undefined) return [];
    return this.#loader(plan.loaderKey, plan.statement, plan.values, false).load(String(parentValue));
  }

  #memoizedPlan(parent: ResourceDefinition, relationName: string, args: RelationArguments, selected: ReadonlySet<string>): RelationPlan {
    const relation = this.#registry.relation(parent, relationName);
    let byRelation = plans.get(selected);
    if (!byRelation) {
      byRelation = new WeakMap();
      plans.set(selected, byRelation);
    }
    let plan = byRelation.get(relation);
    if (!plan) {
      plan = this.#plan(parent, relationName, args, selected);
      byRelation.set(relation, plan);
    }
    return plan;
  }

  #plan(parent: ResourceDefinition, relationName: string, args: RelationArguments, selected: ReadonlySet<string> | undefined): RelationPlan {
    const relation = this.#registry.relation(parent, relationName);
    const target = this.#registry.get(relation.resource);
    const present = Object.keys(relation.arguments ?? {}).filter((name) => args[name] !== undefined && args[name] !== null);
    let embeds: string[] = [];
    let fields: string[] | undefined;
    if (selected) {
      embeds = Object.keys(target.relations ?? {}).filter((name) => selected.has(name) && embeddable(this.#registry, target, name));
      // Relations under the target are resolved from their local fields, which are read too.
      const local = Object.values(target.relations ?? {}).map((nested) => nested.localField);
      fields = Object.keys(target.fields).filter((field) => selected.has(field) || local.includes(field));
    }
    const restricted = this.#restricted;
    const statementKey = `relation:${parent.name}.${relationName}(${present.join(',')})[${embeds.join(',')}]{${fields?.join(',') ?? '*'}}${restricted ? ':restricted' : ''}`;
    const statement = cachedStatement(this.#registry, statementKey, () =>
      buildRelationQuery(this.#registry, relation, present, embeds, fields, restricted),
    );
    const values = bind(statement.query.parameters, {
      workspaces: this.#workspaces,
      args,
      ...(relation.limit ? { limit: limitOf(relation, args) } : {}),
    });
    return { relation, statement, values, loaderKey: `${statementKey}:${JSON.stringify(values)}` };
  }

  /**
   * One page of `parent.relationName` for one parent row (a connection field). The parents of a
   * field in one execution share one statement: a LATERAL keyset scan per parent key, see
   * `buildConnectionQuery`. `selected` is the set of names selected under the connection's
   * `node`, the same set object for every parent row of the field in one execution.
   */
  connection(parent: ResourceDefinition, relationName: string, row: Row, args: RelationArguments, selected: ReadonlySet<string>): Promise<Page> {
    const plan = this.#memoizedConnectionPlan(parent, relationName, args, selected);
    const parentValue = row[plan.relation.localField];
    if (parentValue === null || parentValue === undefined) return Promise.resolve(this.#page(plan, [], parentValue));
    return this.#loader(plan.loaderKey, plan.statement, plan.values, false)
      .load(String(parentValue))
      .then((rows) => this.#page(plan, rows, parentValue));
  }

  #page(plan: ConnectionPlan, found: Row[], parentValue: unknown): Page {
    const { size, backward } = plan.args;
    const more = found.length > size;
    // A copy: the loader hands the same array to every ask for the same parent key.
    const rows = found.slice(0, size);
    if (backward) rows.reverse();
    return {
      rows,
      hasNextPage: !backward && more,
      hasPreviousPage: backward && more,
      cursor: (row) => encodeCursor(plan.list, plan.order.map((_, index) => row[orderColumn(index)])),
      totalCount: () => this.#count(plan, parentValue),
    };
  }

  async #count(plan: ConnectionPlan, parentValue: unknown): Promise<number> {
    if (parentValue === null || parentValue === undefined) return 0;
    if (!plan.count) {
      const restricted = this.#restricted;
      const filter = plan.args.filter;
      const statementKey = `count:${plan.parent.name}.${plan.relationName}(${filter.map((term) => term.join('.')).join(',')})${restricted ? ':restricted' : ''}`;
      const statement = cachedStatement(this.#registry, statementKey, () => buildCountQuery(this.#registry, plan.relation, filter, restricted));
      const values = bind(statement.query.parameters, { workspaces: this.#workspaces, connection: plan.args });
      plan.count = { relation: plan.relation, statement, values, loaderKey: `${statementKey}:${JSON.stringify(values)}` };
    }
    const rows = await this.#loader(plan.count.loaderKey, plan.count.statement, plan.count.values, false).load(String(parentValue));
    return Number(rows[0]?.[COUNT_COLUMN] ?? 0);
  }

  #memoizedConnectionPlan(parent: ResourceDefinition, relationName: string, args: RelationArguments, selected: ReadonlySet<string>): ConnectionPlan {
    const relation = this.#registry.relation(parent, relationName);
    let byRelation = connectionPlans.get(selected);
    if (!byRelation) {
      byRelation = new WeakMap();
      connectionPlans.set(selected, byRelation);
    }
    let plan = byRelation.get(relation);
    if (!plan) {
      plan = this.#connectionPlan(parent, relationName, relation, args, selected);
      byRelation.set(relation, plan);
    }
    return plan;
  }

  #connectionPlan(parent: ResourceDefinition, relationName: string, relation: RelationDefinition, args: RelationArguments, selected: ReadonlySet<string>): ConnectionPlan {
    const target = this.#registry.get(relation.resource);
    const list = connectionList(parent, relationName);
    const order = connectionOrder(this.#registry, relation);
    const parsed = parseConnectionArguments(list, target, order, args);
    const embeds = Object.keys(target.relations ?? {}).filter((name) => selected.has(name) && embeddable(this.#registry, target, name));
    const local = Object.values(target.relations ?? {}).map((nested) => nested.localField);
    const fields = Object.keys(target.fields).filter((field) => selected.has(field) || local.includes(field));
    const restricted = this.#restricted;
    const after = nullPattern(parsed.after);
    const before = nullPattern(parsed.before);
    const shape = [
      parsed.backward ? 'last' : 'first',
      `after(${after?.map(Number).join('') ?? '-'})`,
      `before(${before?.map(Number).join('') ?? '-'})`,
      `filter(${parsed.filter.map((term) => term.join('.')).join(',')})`,
      `[${embeds.join(',')}]{${fields.join(',')}}`,
      restricted ? 'restricted' : '',
    ].join(':');
    const statementKey = `connection:${list}:${shape}`;
    const statement = cachedStatement(this.#registry, statementKey, () =>
      buildConnectionQuery(this.#registry, relation, {
        embedded: embeds,
        fields,
        filter: parsed.filter,
        ...(after ? { after } : {}),
        ...(before ? { before } : {}),
        backward: parsed.backward,
        restricted,
      }),
    );
    // One row past the page tells whether another page follows.
    const values = bind(statement.query.parameters, { workspaces: this.#workspaces, connection: parsed, limit: parsed.size + 1 });
    return { parent, relationName, relation, list, order, args: parsed, statement, values, loaderKey: `${statementKey}:${JSON.stringify(values)}` };
  }

  /**
   * A lookup's loader stays for the request (a primed row is answered from its cache). A
   * relation's loader serves one batch: the parents of a field ask in the same tick and their rows
   * are read with one statement, then the loader is let go, and with it every row once the field is
   * resolved. (A DataLoader keeps its cache and last batch, and through them every answer: kept for
   * the request, the rows of a /courses of 100,000 sessions held some 30 MB until the body was written.)
   */
  #loader(key: string, statement: Statement, argumentValues: readonly unknown[], keepForRequest: boolean): DataLoader<string, Row[]> {
    let loader = this.#loaders.get(key);
    if (!loader) {
      const { query, toRow } = statement;
      loader = new DataLoader<string, Row[]>(async (keys) => {
        if (!keepForRequest) this.#loaders.delete(key);
        const rows = await this.#db.queryArrays(query.text, [keys, ...argumentValues]);
        this.#rowsRead += rows.length;
        const byParent = new Map<string, Row[]>();
        for (let i = 0; i < rows.length; i += 1) {
          const row = toRow(rows[i]!);
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
        return keys.map((parentKey) => byParent.get(parentKey) ?? []);
      });
      this.#loaders.set(key, loader);
    }
    return loader;
  }
}

/** The name a connection's cursors carry: a cursor of one list is refused by another. */
export function connectionList(parent: ResourceDefinition, relationName: string): string {
  return `${parent.name}.${relationName}`;
}

function limitOf(relation: RelationDefinition, args: RelationArguments): number {
  const limit = relation.limit;
  if (!limit) throw new Error('Relation has no limit');
  const requested = args[limit.argument];
  if (requested === undefined || requested === null) return limit.default;
  if (typeof requested !== 'number' || !Number.isInteger(requested) || requested < 1 || requested > limit.max) {
    throw new ApiError('invalid_request', `Argument "${limit.argument}" must be an integer from 1 to ${limit.max}.`);
  }
  return requested;
}
