import DataLoader from 'dataloader';
import type { Queryable } from '../db/database.ts';
import type { RelationDefinition, ResourceDefinition, ResourceRegistry } from '../model/resource-registry.ts';
import {
  COUNT_COLUMN,
  buildConnectionQuery,
  buildCountQuery,
  buildLookup,
  buildRelationQuery,
  connectionOrder,
  type FilterTerm,
  type GeneratedQuery,
} from '../sql/sql-builder.ts';
import { parseConnectionArguments, parseFilter } from './connection-arguments.ts';
import { PersonalAccess } from './personal-access.ts';
import { lookupPageStatement } from './lookup-page.ts';
import { pageOf, type ConnectionPlan, type Page, type RelationPlan } from './plans.ts';
import { connectionStatement, statementShape } from './statement-shape.ts';
import { EMBEDDED, PAGES, bind, cachedStatement, readByParent, readWithPage, type Binding, type EmbeddingRow, type PagedRow, type RelationArguments, type Row, type Statement } from './statements.ts';

export type { Page, RelationArguments, Row };

/** A connection of a looked-up row read in the lookup's statement: the field's relation, arguments and selection, as its resolver gives them. */
export interface PageWith {
  relationName: string;
  args: RelationArguments;
  selected: ReadonlySet<string>;
  cursors: boolean;
}

export interface LoaderOptions {
  /**
   * The workspaces a restricted token may read: every statement that reads a resource carrying a
   * workspace (see `ResourceDefinition.workspaceField`) reads only rows of these, so that another
   * workspace's row is missing exactly as if it did not exist. Absent: every workspace.
   */
  workspaces?: readonly string[] | null | undefined;
  /**
   * Whether personal fields may be read (an internal token without the personal-data grant: no).
   * Without it no statement reads or compares a personal column. Absent: they may.
   */
  personalData?: boolean | undefined;
}

/**
 * One set of DataLoaders per request, generated from the registry: every relation of every parent
 * in a query level is fetched with one statement, whatever the number of parents.
 */
export class Loaders {
  readonly #loaders = new Map<string, DataLoader<string, Row[]>>();
  readonly #registry: ResourceRegistry;
  readonly #db: Queryable;
  readonly #workspaces: readonly string[] | null;
  readonly #personal: PersonalAccess;
  /**
   * Plans of this request's fields, by the set of names selected under a field (one object per
   * field and execution, see `relation`) and the relation: made once per field, not once per
   * parent row. They hold this request's bound values, so they live and die with its loaders.
   */
  readonly #plans = new WeakMap<ReadonlySet<string>, Map<string, RelationPlan | ConnectionPlan>>();
  #rowsRead = 0;

  constructor(registry: ResourceRegistry, db: Queryable, options: LoaderOptions = {}) {
    this.#registry = registry;
    this.#db = db;
    this.#workspaces = options.workspaces ?? null;
    this.#personal = new PersonalAccess(options.personalData ?? true);
  }

  /** The personal columns this request's statements read so far (`table.column`), for the audit trail. */
  get personalColumnsRead(): string[] {
    return this.#personal.read;
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
    // The lookup that selects no personal field is the one the row answers (it may hold more).
    const { key, statement } = this.#lookupStatement(resource, by, this.#personal.fieldsToRead(resource, undefined, () => false));
    this.#loader(key, statement, [], true, []).prime(String(row[by]), [row]);
  }

  #lookupStatement(resource: ResourceDefinition, by: string, fields: string[] | undefined): { key: string; statement: Statement } {
    const key = `lookup:${resource.name}.${by}${fields ? `{${fields.join(',')}}` : ''}${this.#restricted ? ':restricted' : ''}`;
    return { key, statement: cachedStatement(this.#registry, key, () => buildLookup(resource, by, { restricted: this.#restricted, ...(fields ? { fields } : {}) })) };
  }

  /**
   * One row of `resourceName` whose `field` (its key by default) equals `value`: every field but
   * the personal ones, which are read only when `selected` names them. With `page`, the page of
   * that connection is read in the same statement and given to the connection field from the row.
   */
  async lookup(resourceName: string, value: string, field?: string, selected?: ReadonlySet<string>, page?: PageWith): Promise<Row | null> {
    const resource = this.#registry.get(resourceName);
    const by = field ?? resource.key;
    const fields = this.#personal.fieldsToRead(resource, undefined, (name) => selected?.has(name) ?? false);
    const { key, statement } = this.#lookupStatement(resource, by, fields);
    const personal = this.#personal.columns(resource, [by, resource.key, ...(fields ?? [])]);
    const plan = page && this.#pagePlan(resource, page);
    const paged = plan && lookupPageStatement(this.#registry, resource, by, key, fields, plan);
    if (plan && paged) {
      const values = bind(paged.statement.query.parameters, { workspaces: this.#workspaces, connection: plan.args, limit: plan.args.size + 1 });
      const reader = { ...paged.page, key: plan.loaderKey };
      const loader = this.#loader(`${key}+${plan.loaderKey}`, paged.statement, values, true, [...personal, ...plan.personal], (db, keys) => readWithPage(db, paged.statement, reader, keys, values));
      return (await loader.load(value))[0] ?? null;
    }
    const values = bind(statement.query.parameters, { workspaces: this.#workspaces });
    const rows = await this.#loader(key, statement, values, true, personal).load(value);
    return rows[0] ?? null;
  }

  /** The plan of the page a lookup reads with its row; none when its arguments or selection are refused (the page's own field then says why). */
  #pagePlan(resource: ResourceDefinition, page: PageWith): ConnectionPlan | null {
    try {
      return this.#memoized('connection', resource, page.relationName, page.selected, () => this.#connectionPlan(resource, page.relationName, page.args, page.selected, page.cursors));
    } catch {
      return null;
    }
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
    const plan = this.#memoized('relation', parent, relationName, selected, () => this.#relationPlan(parent, relationName, args, selected));
    const parentValue = row[plan.relation.localField];
    if (parentValue === null || parentValue === undefined) return [];
    return this.#loader(plan.loaderKey, plan.statement, plan.values, false, plan.personal).load(String(parentValue));
  }

  /** The plan of one field of this request, made on its first parent row. */
  #memoized<P extends RelationPlan>(kind: string, parent: ResourceDefinition, relationName: string, selected: ReadonlySet<string> | undefined, make: () => P): P {
    if (!selected) return make();
    let byField = this.#plans.get(selected);
    if (!byField) {
      byField = new Map();
      this.#plans.set(selected, byField);
    }
    const key = `${kind}:${parent.name}.${relationName}`;
    let plan = byField.get(key) as P | undefined;
    if (!plan) {
      plan = make();
      byField.set(key, plan);
    }
    return plan;
  }

  /**
   * The one way a plan is made: the statement of `shapeKey` (generated once per process: it holds
   * no request value), and this request's values bound into its parameters.
   */
  #planned(relation: RelationDefinition, shapeKey: string, build: (restricted: boolean) => GeneratedQuery, binding: Binding, personal: readonly string[]): RelationPlan {
    const restricted = this.#restricted;
    const statementKey = `${shapeKey}${restricted ? ':restricted' : ''}`;
    const statement = cachedStatement(this.#registry, statementKey, () => build(restricted));
    const values = bind(statement.query.parameters, { ...binding, workspaces: this.#workspaces });
    return { relation, statement, values, loaderKey: `${statementKey}:${JSON.stringify(values)}`, statementKey, personal };
  }

  /**
   * The personal columns a relation's statement compares: its target's column the parents are
   * matched with (personal in a table that is as a whole), and those of the filter's conditions,
   * refused without the grant.
   */
  #compared(relation: RelationDefinition, terms: readonly FilterTerm[]): string[] {
    const target = this.#registry.get(relation.resource);
    const fields = terms.map(([field]) => field);
    this.#personal.refuseWithoutGrant(target, fields);
    return this.#personal.columns(target, [relation.foreignField, ...fields]);
  }

  #relationPlan(parent: ResourceDefinition, relationName: string, args: RelationArguments, selected: ReadonlySet<string> | undefined): RelationPlan {
    const relation = this.#registry.relation(parent, relationName);
    const target = this.#registry.get(relation.resource);
    const filter = parseFilter(target, args.filter);
    const compared = this.#compared(relation, filter.terms);
    const { embeds, embeddedFields, fields, key, personal } = statementShape(this.#registry, this.#personal, target, selected);
    return this.#planned(
      relation,
      `relation:${parent.name}.${relationName}(${filter.terms.map((term) => term.join('.')).join(',')})${key}`,
      (restricted) => buildRelationQuery(this.#registry, relation, { filter: filter.terms, embedded: embeds, embeddedFields, ...(fields ? { fields } : {}), restricted }),
      { filterValues: filter.values },
      [...personal, ...compared],
    );
  }

  /**
   * One page of `parent.relationName` for one parent row (a connection field). The parents of a
   * field in one execution share one statement: a LATERAL keyset scan per parent key, see
   * `buildConnectionQuery`. `selected` is the set of names selected under the connection's
   * `node`, the same set object for every parent row of the field in one execution; `cursors`,
   * whether a cursor of it is selected (without, its statement does not read what they are made of).
   */
  connection(parent: ResourceDefinition, relationName: string, row: Row, args: RelationArguments, selected: ReadonlySet<string>, cursors = true): Promise<Page> {
    const plan = this.#memoized('connection', parent, relationName, selected, () => this.#connectionPlan(parent, relationName, args, selected, cursors));
    const parentValue = row[plan.relation.localField];
    if (parentValue === null || parentValue === undefined) return Promise.resolve(this.#page(plan, [], parentValue));
    const read = (row as PagedRow)[PAGES]?.[plan.loaderKey];
    if (read) return Promise.resolve(this.#page(plan, read, parentValue));
    return this.#loader(plan.loaderKey, plan.statement, plan.values, false, plan.personal)
      .load(String(parentValue))
      .then((rows) => this.#page(plan, rows, parentValue));
  }

  #page(plan: ConnectionPlan, found: Row[], parentValue: unknown): Page {
    return pageOf(plan, found, () => this.#count(plan, parentValue));
  }

  async #count(plan: ConnectionPlan, parentValue: unknown): Promise<number> {
    if (parentValue === null || parentValue === undefined) return 0;
    if (!plan.count) {
      const filter = plan.args.filter;
      plan.count = this.#planned(
        plan.relation,
        `count:${plan.parent.name}.${plan.relationName}(${filter.map((term) => term.join('.')).join(',')})`,
        (restricted) => buildCountQuery(this.#registry, plan.relation, { filter, restricted }),
        { connection: plan.args },
        this.#compared(plan.relation, filter),
      );
    }
    const rows = await this.#loader(plan.count.loaderKey, plan.count.statement, plan.count.values, false, plan.count.personal).load(String(parentValue));
    return Number(rows[0]?.[COUNT_COLUMN] ?? 0);
  }

  #connectionPlan(parent: ResourceDefinition, relationName: string, args: RelationArguments, selected: ReadonlySet<string>, cursors: boolean): ConnectionPlan {
    const relation = this.#registry.relation(parent, relationName);
    const target = this.#registry.get(relation.resource);
    const list = connectionList(parent, relationName);
    const order = connectionOrder(this.#registry, relation);
    const parsed = parseConnectionArguments(list, target, order, args);
    const compared = this.#compared(relation, parsed.filter);
    const shaped = statementShape(this.#registry, this.#personal, target, selected);
    const { shape, query } = connectionStatement(shaped, parsed, cursors, this.#restricted);
    const plan = this.#planned(
      relation,
      `connection:${list}:${shape}`,
      () => buildConnectionQuery(this.#registry, relation, query),
      // One row past the page tells whether another page follows.
      { connection: parsed, limit: parsed.size + 1 },
      [...shaped.personal, ...compared],
    );
    return { ...plan, parent, relationName, list, order, args: parsed, cursors, query };
  }

  /**
   * A lookup's loader stays for the request (a primed row is answered from its cache). A
   * relation's loader serves one batch: the parents of a field ask in the same tick and their rows
   * are read with one statement, then the loader is let go, and with it every row once the field is
   * resolved. (A DataLoader keeps its cache and last batch, and through them every answer: kept for
   * the request, the rows of a /courses of 100,000 sessions held some 30 MB until the body was written.)
   */
  #loader(
    key: string,
    statement: Statement,
    argumentValues: readonly unknown[],
    keepForRequest: boolean,
    personal: readonly string[],
    reader: (db: Queryable, keys: readonly string[]) => Promise<{ groups: Row[][]; rows: number }> = (db, keys) => readByParent(db, statement, keys, argumentValues),
  ): DataLoader<string, Row[]> {
    let loader = this.#loaders.get(key);
    if (!loader) {
      loader = new DataLoader<string, Row[]>(async (keys) => {
        if (!keepForRequest) this.#loaders.delete(key);
        const read = await reader(this.#db, keys);
        this.#rowsRead += read.rows;
        this.#personal.note(personal);
        return read.groups;
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
