import DataLoader from 'dataloader';
import type { Database } from '../db/database.ts';
import type { RelationDefinition, ResourceDefinition, ResourceRegistry } from '../db/resource.ts';
import { PARENT_COLUMN, buildLookup, buildRelationQuery, embeddable, type GeneratedQuery } from '../db/sql-builder.ts';
import { ApiError } from '../errors.ts';

export type Row = Record<string, unknown>;
export type RelationArguments = Record<string, unknown>;

/** Rows of one-relations read together with their parent row (null: the parent has none). */
const EMBEDDED = Symbol('embedded');
type EmbeddingRow = Row & { [EMBEDDED]?: Record<string, Row | null> };

/** The names of the fields selected under a relation, asked for only when a statement is planned. */
export type Selection = () => ReadonlySet<string>;
const NOTHING_SELECTED: Selection = () => new Set();

/**
 * Statements depend only on the registry and on which arguments a field is given, so they are
 * generated once per process and shared by every request.
 */
const statementCache = new WeakMap<ResourceRegistry, Map<string, GeneratedQuery>>();

function cachedStatement(registry: ResourceRegistry, key: string, build: () => GeneratedQuery): GeneratedQuery {
  let statements = statementCache.get(registry);
  if (!statements) {
    statements = new Map();
    statementCache.set(registry, statements);
  }
  let statement = statements.get(key);
  if (!statement) {
    statement = build();
    statements.set(key, statement);
  }
  return statement;
}

/**
 * One set of DataLoaders per request, generated from the registry: every relation of every parent
 * in a query level is fetched with one statement, whatever the number of parents.
 */
export class Loaders {
  readonly #loaders = new Map<string, DataLoader<string, Row[]>>();
  readonly #registry: ResourceRegistry;
  readonly #db: Database;

  constructor(registry: ResourceRegistry, db: Database) {
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
    this.#loader(`lookup:${resource.name}.${by}`, statement, []).prime(String(row[by]), [row]);
  }

  /** One row of `resourceName` whose `field` (its key by default) equals `value`. */
  async lookup(resourceName: string, value: string, field?: string): Promise<Row | null> {
    const resource = this.#registry.get(resourceName);
    const by = field ?? resource.key;
    const statement = cachedStatement(this.#registry, `lookup:${resource.name}.${by}`, () => buildLookup(resource, by));
    const rows = await this.#loader(`lookup:${resource.name}.${by}`, statement, []).load(value);
    return rows[0] ?? null;
  }

  /**
   * The rows of `parent.relationName` for one parent row. One-relations of the target that are
   * selected and `embeddable` are read in the same statement as the target rows.
   */
  relation(parent: ResourceDefinition, relationName: string, row: Row, args: RelationArguments, selection: Selection = NOTHING_SELECTED): Row[] | Promise<Row[]> {
    const embedded = (row as EmbeddingRow)[EMBEDDED]?.[relationName];
    if (embedded !== undefined) return embedded === null ? [] : [embedded];
    const relation = this.#registry.relation(parent, relationName);
    const parentValue = row[relation.localField];
    if (parentValue === null || parentValue === undefined) return [];
    const present = Object.keys(relation.arguments ?? {}).filter((name) => args[name] !== undefined && args[name] !== null);
    const target = this.#registry.get(relation.resource);
    const selected = selection();
    const embeds = Object.keys(target.relations ?? {}).filter((name) => selected.has(name) && embeddable(this.#registry, target, name));
    const statementKey = `relation:${parent.name}.${relationName}(${present.join(',')})[${embeds.join(',')}]`;
    const statement = cachedStatement(this.#registry, statementKey, () =>
      buildRelationQuery(this.#registry, relation, present, embeds),
    );
    const values = [
      ...statement.argumentOrder.map((name) => args[name]),
      ...(statement.hasLimit ? [limitOf(relation, args)] : []),
    ];
    const loaderKey = `${statementKey}:${JSON.stringify(values)}`;
    return this.#loader(loaderKey, statement, values).load(String(parentValue));
  }

  #loader(key: string, statement: GeneratedQuery, argumentValues: unknown[]): DataLoader<string, Row[]> {
    let loader = this.#loaders.get(key);
    if (!loader) {
      loader = new DataLoader<string, Row[]>(async (keys) => {
        const result = await this.#db.query(statement.text, [keys, ...statement.fixedValues, ...argumentValues]);
        const byParent = new Map<string, Row[]>();
        for (const row of result.rows as EmbeddingRow[]) {
          if (statement.embeds.length > 0) unpackEmbedded(row, statement);
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

function unpackEmbedded(row: EmbeddingRow, statement: GeneratedQuery): void {
  const embedded: Record<string, Row | null> = {};
  for (const embed of statement.embeds) {
    if (row[embed.keyAlias] === null) {
      embedded[embed.relation] = null;
      continue;
    }
    const joined: Row = {};
    for (const [alias, field] of embed.fields) joined[field] = row[alias];
    embedded[embed.relation] = joined;
  }
  row[EMBEDDED] = embedded;
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
