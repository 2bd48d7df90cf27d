/**
 * The resource registry: each resource names its table, maps GraphQL fields to typed columns and
 * declares its relations. Every read the GraphQL layer makes is a SELECT generated from it, and
 * every list gets a paginated, filterable connection from it. The service's registry is derived
 * from PostgreSQL's catalog and the overlay (`resource-model.ts`), never written by hand.
 */

export type Scalar = string | number | boolean;

/**
 * What a column holds. It decides how the column is read (a `timestamp` as UTC text, see
 * `isoFromUtcText`), which filter operators a connection offers on it (`FILTER_OPERATORS`) and how
 * a cursor carries its value.
 */
export type FieldType = 'id' | 'string' | 'int' | 'float' | 'boolean' | 'enum' | 'timestamp';

export interface FieldDefinition {
  column: string;
  type: FieldType;
  /** The column may be NULL (pagination then orders and compares with NULLs in their place). */
  nullable?: boolean;
  /** For an `enum` column: the GraphQL enum type its values are served as. */
  enumType?: string;
  description?: string;
  /** Marked `@deprecated` in the schema, with this reason. */
  deprecated?: string;
  /**
   * Personal data (the overlay's `personalData: ['email']`): read only for a caller that may read
   * personal data, never filtered on by one that may not; the audit trail names it when read.
   */
  personal?: boolean;
}

/** A column name alone is a non-null `string` column. */
export type FieldSpec = string | FieldDefinition;

export type FilterOperator = 'eq' | 'in' | 'gt' | 'gte' | 'lt' | 'lte';

/** The filter operators of each column type: equality everywhere, `in` where a set of values is cheap, ranges on ordered types. */
export const FILTER_OPERATORS: Readonly<Record<FieldType, readonly FilterOperator[]>> = {
  id: ['eq', 'in'],
  string: ['eq', 'in'],
  enum: ['eq', 'in'],
  boolean: ['eq'],
  int: ['eq', 'in', 'gt', 'gte', 'lt', 'lte'],
  float: ['eq', 'gt', 'gte', 'lt', 'lte'],
  timestamp: ['eq', 'gt', 'gte', 'lt', 'lte'],
};

const FIELD_TYPES = new Set<string>(Object.keys(FILTER_OPERATORS));

export interface OrderTerm {
  field: string;
  direction?: 'asc' | 'desc';
}

export interface RelationDefinition {
  resource: string;
  kind: 'one' | 'many';
  /** The field of the parent whose value is looked up (its key for a `many` relation). */
  localField: string;
  /** The field of the target matched against the parent's value. */
  foreignField: string;
  /** Only the target rows whose field of this name is set (a named list, see the overlay's `lists`). */
  present?: string;
  /** The order of a `many` relation's rows; the connection adds the target's key last. */
  orderBy?: OrderTerm[];
  /** A `one` relation that may find no row (its local field is nullable, or it is the other end of a key). */
  optional?: boolean;
  description?: string;
  /** Marked `@deprecated` in the schema (its connection too), with this reason. */
  deprecated?: string;
}

/**
 * An index of a resource's table, as the cost of a list is judged by it: a list whose parent
 * column and order lead an index reads a page's rows only (docs/internal-graphql.md, Cost budgets).
 */
export interface IndexDefinition {
  name: string;
  /** Its key columns, as fields, in order. */
  terms: Array<{ field: string; direction: 'asc' | 'desc' }>;
  /** A partial index whose predicate is this field being set; other partial indexes are not listed. */
  whereSet?: string;
}

export interface ResourceDefinition {
  /** The GraphQL object type this resource resolves. */
  name: string;
  table: string;
  /**
   * GraphQL field name → column, with its type. `timestamp` columns (`timestamptz`) are read as
   * UTC text and turned into ISO 8601 with milliseconds (the DateTime format) by string slicing, so
   * no row carries a Date object.
   */
  fields: Record<string, FieldSpec>;
  /** The field that identifies one row. */
  key: string;
  /**
   * The field holding the id of the workspace a row belongs to. A token restricted to some
   * workspaces reads only rows whose workspace is one of them, in every statement that reads this
   * resource. A resource with `roots` must declare it (`null` for data of no workspace).
   */
  workspaceField?: string | null;
  /**
   * For rows without a workspace column: the field whose value is the key of a row of `resource`,
   * which declares `workspaceField` (a participant's workspace is its booking's). Such rows are
   * reached only through that row, which the workspace restriction already covers.
   */
  workspaceThrough?: { field: string; resource: string };
  /** Personal data as a whole, every field of it (participants); single fields say so with `personal`. */
  personalData?: boolean;
  relations?: Record<string, RelationDefinition>;
  /** `Query` fields that look one row up by the resource's key, by name. */
  roots?: Record<string, RootDefinition>;
  /** A page of a connection of these rows holds at most this many (100 when absent). */
  maxPage?: number;
  /** The indexes of its table whose columns are all served (the catalog's). */
  indexes?: IndexDefinition[];
  description?: string;
}

/** A `Query` field that returns one row of the resource looked up by an argument. */
export interface RootDefinition {
  argument: string;
  /** The field matched against the argument; the resource's key when omitted. */
  field?: string;
}

/** The column of a field. */
export function columnOf(resource: ResourceDefinition, field: string): string {
  const spec = resource.fields[field];
  if (spec === undefined) throw new Error(`${resource.name} has no field ${field}`);
  return typeof spec === 'string' ? spec : spec.column;
}

const personal = new WeakMap<ResourceDefinition, ReadonlySet<string>>();

/** The fields of a resource that hold personal data: all of them for a resource that is personal data as a whole. */
export function personalFields(resource: ResourceDefinition): ReadonlySet<string> {
  let fields = personal.get(resource);
  if (!fields) {
    fields = new Set(Object.keys(resource.fields).filter((field) => resource.personalData === true || fieldDefinition(resource, field).personal === true));
    personal.set(resource, fields);
  }
  return fields;
}

/** The type and nullability of a field. */
export function fieldDefinition(resource: ResourceDefinition, field: string): FieldDefinition {
  const spec = resource.fields[field];
  if (spec === undefined) throw new Error(`${resource.name} has no field ${field}`);
  return typeof spec === 'string' ? { column: spec, type: 'string' } : spec;
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
    assertIdentifier(definition.table);
    for (const field of Object.keys(definition.fields)) {
      const { column, type } = fieldDefinition(definition, field);
      assertIdentifier(column);
      if (!FIELD_TYPES.has(type)) throw new Error(`Resource ${definition.name}: field ${field} has an unknown type ${String(type)}`);
    }
    if (definition.roots && definition.workspaceField === undefined) {
      throw new Error(`Resource ${definition.name} has roots: declare its workspaceField (or workspaceField: null for data of no workspace)`);
    }
    this.#resources.set(definition.name, definition);
    return this;
  }

  /** Checks that every relation and root points at a known resource and known fields. */
  validate(): void {
    for (const resource of this.#resources.values()) {
      for (const [rootName, root] of Object.entries(resource.roots ?? {})) {
        if (root.field !== undefined) assertField(resource, root.field, `${resource.name}.roots.${rootName}`);
      }
      if (resource.workspaceField) assertField(resource, resource.workspaceField, `${resource.name}.workspaceField`);
      if (resource.workspaceThrough) {
        const where = `${resource.name}.workspaceThrough`;
        assertField(resource, resource.workspaceThrough.field, where);
        if (!this.get(resource.workspaceThrough.resource).workspaceField) {
          throw new Error(`${where}: ${resource.workspaceThrough.resource} declares no workspaceField`);
        }
      }
      for (const [relationName, relation] of Object.entries(resource.relations ?? {})) {
        const where = `${resource.name}.${relationName}`;
        const target = this.get(relation.resource);
        assertField(resource, relation.localField, where);
        assertField(target, relation.foreignField, where);
        if (relation.present !== undefined) assertField(target, relation.present, where);
        for (const term of relation.orderBy ?? []) assertField(target, term.field, where);
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
