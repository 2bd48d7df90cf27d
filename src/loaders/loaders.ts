import DataLoader from 'dataloader';
import type { Queryable } from '../db/database.ts';
import type { RelationDefinition, ResourceDefinition, ResourceRegistry } from '../db/resource.ts';
import { PARENT_COLUMN, buildLookup, buildRelationQuery, embeddable, type GeneratedQuery } from '../db/sql-builder.ts';
import { isoFromUtcText } from '../db/timestamps.ts';
import { ApiError } from '../errors.ts';
import { selectedFields, type SelectionInfo } from '../graphql/selection.ts';

export type Row = Record<string, unknown>;
export type RelationArguments = Record<string, unknown>;

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

// Field nodes are stable per compiled query (graphql-jit) or per execution (graphql-js), and
// arguments follow from them and the variables: the plan is made once per field and execution.
const plans = new WeakMap<object, WeakMap<object, RelationPlan>>();
const NO_VARIABLES = {};
const EMPTY: unknown[] = [];

/**
 * One set of DataLoaders per request, generated from the registry: every relation of every parent
 * in a query level is fetched with one statement, whatever the number of parents.
 */
export class Loaders {
  readonly #loaders = new Map<string, DataLoader<string, Row[]>>();
  readonly #registry: ResourceRegistry;
  readonly #db: Queryable;

  constructor(registry: ResourceRegistry, db: Queryable) {
    this.#registry = registry;
    this.#db = db;
  }

  /**
   * Makes a row already read elsewhere (a key's workspace, read with the key) the answer to the
   * lookup of its key, so that it is not read again.
   */
  prime(resourceName: string, row: Row): void {
    const resource = this.#registry.get(resourceName);
    const by = resource.key;
    const statement = cachedStatement(this.#registry, `lookup:${resource.name}.${by}`, () => buildLookup(resource, by));
    this.#loader(`lookup:${resource.name}.${by}`, statement, [], true).prime(String(row[by]), [row]);
  }

  /** One row of `resourceName` whose `field` (its key by default) equals `value`. */
  async lookup(resourceName: string, value: string, field?: string): Promise<Row | null> {
    const resource = this.#registry.get(resourceName);
    const by = field ?? resource.key;
    const statement = cachedStatement(this.#registry, `lookup:${resource.name}.${by}`, () => buildLookup(resource, by));
    const rows = await this.#loader(`lookup:${resource.name}.${by}`, statement, [], true).load(value);
    return rows[0] ?? null;
  }

  /**
   * The rows of `parent.relationName` for one parent row. Given the field's resolve info, only
   * the selected fields are read, and selected one-relations of the target that are `embeddable`
   * are read in the same statement as the target rows.
   */
  relation(parent: ResourceDefinition, relationName: string, row: Row, args: RelationArguments, info?: SelectionInfo): Row[] | Promise<Row[]> {
    const embedded = (row as EmbeddingRow)[EMBEDDED]?.[relationName];
    if (embedded !== undefined) return embedded === null ? [] : [embedded];
    const plan = info ? this.#memoizedPlan(parent, relationName, args, info) : this.#plan(parent, relationName, args, undefined);
    const parentValue = row[plan.relation.localField];
    if (parentValue === null || parentValue === undefined) return [];
    return this.#loader(plan.loaderKey, plan.statement, plan.values, false).load(String(parentValue));
  }

  #memoizedPlan(parent: ResourceDefinition, relationName: string, args: RelationArguments, info: SelectionInfo): RelationPlan {
    let byVariables = plans.get(info.fieldNodes);
    if (!byVariables) {
      byVariables = new WeakMap();
      plans.set(info.fieldNodes, byVariables);
    }
    const variables = info.variableValues ?? NO_VARIABLES;
    let plan = byVariables.get(variables);
    if (!plan || plan.relation !== this.#registry.relation(parent, relationName)) {
      plan = this.#plan(parent, relationName, args, info);
      byVariables.set(variables, plan);
    }
    return plan;
  }

  #plan(parent: ResourceDefinition, relationName: string, args: RelationArguments, info: SelectionInfo | undefined): RelationPlan {
    const relation = this.#registry.relation(parent, relationName);
    const target = this.#registry.get(relation.resource);
    const present = Object.keys(relation.arguments ?? {}).filter((name) => args[name] !== undefined && args[name] !== null);
    let embeds: string[] = [];
    let fields: string[] | undefined;
    if (info) {
      const selected = selectedFields(info);
      embeds = Object.keys(target.relations ?? {}).filter((name) => selected.has(name) && embeddable(this.#registry, target, name));
      // Relations under the target are resolved from their local fields, which are read too.
      const local = Object.values(target.relations ?? {}).map((nested) => nested.localField);
      fields = Object.keys(target.fields).filter((field) => selected.has(field) || local.includes(field));
    }
    const statementKey = `relation:${parent.name}.${relationName}(${present.join(',')})[${embeds.join(',')}]{${fields?.join(',') ?? '*'}}`;
    const statement = cachedStatement(this.#registry, statementKey, () =>
      buildRelationQuery(this.#registry, relation, present, embeds, fields),
    );
    const values = [...statement.query.argumentOrder.map((name) => args[name]), ...(statement.query.hasLimit ? [limitOf(relation, args)] : [])];
    return { relation, statement, values, loaderKey: `${statementKey}:${JSON.stringify(values)}` };
  }

  /**
   * A lookup's loader stays for the request (a primed row is answered from its cache). A
   * relation's loader serves one batch: the parents of a field ask in the same tick and their rows
   * are read with one statement, then the loader is let go, and with it every row once the field is
   * resolved. (A DataLoader keeps its cache and last batch, and through them every answer: kept for
   * the request, the rows of a /courses of 100,000 sessions held some 30 MB until the body was written.)
   */
  #loader(key: string, statement: Statement, argumentValues: unknown[], keepForRequest: boolean): DataLoader<string, Row[]> {
    let loader = this.#loaders.get(key);
    if (!loader) {
      const { query, toRow } = statement;
      loader = new DataLoader<string, Row[]>(async (keys) => {
        if (!keepForRequest) this.#loaders.delete(key);
        const rows = await this.#db.queryArrays(query.text, [keys, ...query.fixedValues, ...argumentValues]);
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
