/**
 * The declarative resource registry: each resource names its table, maps GraphQL fields to columns
 * and declares its relations. Every read the GraphQL layer makes is a SELECT generated from it, so a
 * new resource needs SDL, a registry entry and a migration, never a hand-written query.
 */

export type Scalar = string | number | boolean;

export interface OrderTerm {
  field: string;
  direction?: 'asc' | 'desc';
}

/** Orders by an aggregate over a relation's rows, e.g. a run's earliest scheduled session. */
export interface AggregateOrderTerm {
  aggregate: 'min' | 'max' | 'count';
  relation: string;
  field: string;
  direction?: 'asc' | 'desc';
  /** Extra equality conditions on the aggregated rows. */
  where?: Record<string, Scalar>;
}

export interface RelationFilter {
  relation: string;
  /** Extra equality conditions on the related rows. */
  where?: Record<string, Scalar>;
}

export interface RelationArgument {
  /** The target field the argument filters on: `field = ANY(argument)`. */
  field: string;
}

export interface RelationLimit {
  argument: string;
  default: number;
  max: number;
}

export interface RelationDefinition {
  resource: string;
  kind: 'one' | 'many';
  /** The field of the parent whose value is looked up (its key for a `many` relation). */
  localField: string;
  /** The field of the target matched against the parent's value. */
  foreignField: string;
  /** Fixed equality conditions on the target rows. */
  where?: Record<string, Scalar>;
  /** The target rows must have at least one row in each of these relations. */
  requires?: RelationFilter[];
  orderBy?: Array<OrderTerm | AggregateOrderTerm>;
  /** GraphQL arguments that filter the target rows. */
  arguments?: Record<string, RelationArgument>;
  /** A per-parent row limit taken from a GraphQL argument. */
  limit?: RelationLimit;
}

/** A `Query` field that returns one row of the resource looked up by an argument. */
export interface RootDefinition {
  argument: string;
  /** The field matched against the argument; the resource's key when omitted. */
  field?: string;
}

export interface ResourceDefinition {
  /** The GraphQL object type this resource resolves. */
  name: string;
  table: string;
  /** GraphQL field name → column name. */
  fields: Record<string, string>;
  /**
   * Fields whose column is a `timestamptz`. They are read as UTC text and turned into ISO 8601
   * with milliseconds (the DateTime format) by string slicing, so no row carries a Date object.
   */
  timestamps?: readonly string[];
  /** The field that identifies one row. */
  key: string;
  relations?: Record<string, RelationDefinition>;
  /** `Query` fields resolved by this resource. */
  roots?: Record<string, RootDefinition>;
}

export class ResourceRegistry {
  readonly #resources = new Map<string, ResourceDefinition>();

  constructor(definitions: readonly ResourceDefinition[] = []) {
    for (const definition of definitions) this.register(definition);
  }

  register(definition: ResourceDefinition): this {
    if (this.#resources.has(definition.name)) {
      throw new Error(`Resource ${definition.name} is registered twice`);
    }
    if (!(definition.key in definition.fields)) {
      throw new Error(`Resource ${definition.name}: key field ${definition.key} has no column`);
    }
    for (const column of [definition.table, ...Object.values(definition.fields)]) assertIdentifier(column);
    this.#resources.set(definition.name, definition);
    return this;
  }

  /** Checks that every relation points at a known resource and known fields. */
  validate(): void {
    for (const resource of this.#resources.values()) {
      for (const field of resource.timestamps ?? []) assertField(resource, field, `${resource.name}.timestamps`);
      for (const [relationName, relation] of Object.entries(resource.relations ?? {})) {
        const where = `${resource.name}.${relationName}`;
        const target = this.get(relation.resource);
        assertField(resource, relation.localField, where);
        assertField(target, relation.foreignField, where);
        for (const field of Object.keys(relation.where ?? {})) assertField(target, field, where);
        for (const argument of Object.values(relation.arguments ?? {})) assertField(target, argument.field, where);
        for (const term of relation.orderBy ?? []) {
          if ('aggregate' in term) {
            const nested = this.relation(target, term.relation);
            assertField(this.get(nested.resource), term.field, where);
          } else {
            assertField(target, term.field, where);
          }
        }
        for (const filter of relation.requires ?? []) this.relation(target, filter.relation);
      }
    }
  }

  get(name: string): ResourceDefinition {
    const resource = this.#resources.get(name);
    if (!resource) throw new Error(`Unknown resource ${name}`);
    return resource;
  }

  has(name: string): boolean {
    return this.#resources.has(name);
  }

  relation(resource: ResourceDefinition, name: string): RelationDefinition {
    const relation = resource.relations?.[name];
    if (!relation) throw new Error(`Unknown relation ${resource.name}.${name}`);
    return relation;
  }

  all(): ResourceDefinition[] {
    return [...this.#resources.values()];
  }
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function assertIdentifier(name: string): void {
  if (!IDENTIFIER.test(name)) throw new Error(`Not a plain SQL identifier: ${name}`);
}

function assertField(resource: ResourceDefinition, field: string, where: string): void {
  if (!(field in resource.fields)) throw new Error(`${where}: ${resource.name} has no field ${field}`);
}
