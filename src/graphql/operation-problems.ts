import {
  Kind,
  isEnumType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  parse,
  validate,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLOutputType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { Catalog } from '../db/catalog.ts';
import { MODEL_SOURCES, deriveModel, type Overlay, type ResourceModel } from '../db/resource-model.ts';
import { operationSources, type OperationName } from './operations.ts';
import { PUBLIC_ANSWERS } from './public-representation.ts';
import { createSchema } from './schema.ts';

const OPERATIONS_FILE = 'src/graphql/operations.ts';
const CONTRACT_FILE = 'openapi/public-v1.yaml';

/** Where a field of a fixed operation's document stands: the type it is selected on, and the markers of the leaves under it. */
interface Placed {
  parent: string;
  markers: string[];
}

/**
 * A result of the operation with every field selected (directives aside): each leaf a marker
 * naming it, each list one item, each enum its first value; and, for each field node, its parent
 * type and the markers under it.
 */
function sampleResult(schema: GraphQLSchema, document: DocumentNode): { data: Record<string, unknown>; placed: Map<FieldNode, Placed> } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const placed = new Map<FieldNode, Placed>();
  let next = 0;
  const valueOf = (type: GraphQLOutputType, node: FieldNode, markers: string[]): unknown => {
    if (isNonNullType(type)) return valueOf(type.ofType, node, markers);
    if (isListType(type)) return [valueOf(type.ofType, node, markers)];
    if (isObjectType(type) || isInterfaceType(type)) return objectOf(node.selectionSet, type.name, markers);
    if (isEnumType(type)) return type.getValues()[0]?.name;
    const marker = `\u0001${(next += 1)}`;
    markers.push(marker);
    return marker;
  };
  const objectOf = (set: SelectionSetNode | undefined, typeName: string, outer: string[]): Record<string, unknown> => {
    const object: Record<string, unknown> = {};
    const type = schema.getType(typeName);
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[selection.name.value] : undefined;
        if (!field) continue;
        const markers: string[] = [];
        object[selection.alias?.value ?? selection.name.value] = valueOf(field.type, selection, markers);
        placed.set(selection, { parent: typeName, markers });
        outer.push(...markers);
      } else {
        const fragment = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
        Object.assign(object, objectOf(fragment?.selectionSet, fragment?.typeCondition?.name.value ?? typeName, outer));
      }
    }
    return object;
  };
  const operation = document.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  const data = operation?.kind === Kind.OPERATION_DEFINITION ? objectOf(operation.selectionSet, schema.getQueryType()!.name, []) : {};
  return { data, placed };
}

/** Where each marker lands in the public answer: `sessions[].location`. */
function contractPaths(value: unknown, path: string, found: Map<string, string>): void {
  if (typeof value === 'string' && value.startsWith('\u0001')) found.set(value, path);
  else if (Array.isArray(value)) for (const item of value) contractPaths(item, `${path}[]`, found);
  else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) contractPaths(item, path ? `${path}.${key}` : key, found);
}

/** An overlay entry as it is written in src/db/overlay.ts. */
function entryText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(entryText).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const parts = Object.entries(value).map(([key, item]) => `${/^[A-Za-z_]\w*$/.test(key) ? key : `'${key}'`}: ${entryText(item)}`);
    return parts.length > 0 ? `{ ${parts.join(', ')} }` : '{}';
  }
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/** What the model served under `typeName.field` before, and what the new catalog and overlay made of it. */
function whatChanged(before: ResourceModel, after: Catalog, overlay: Overlay, typeName: string, field: string): { what: string; rename?: string } {
  const table = [...before.tables.values()].find((model) => model.type === typeName);
  const column = table?.fields[field]?.column;
  if (!table || !column) return { what: `${typeName}.${field}, which the schema no longer has` };
  const now = after.tables[table.table];
  if (now?.columns.some((c) => c.name === column)) return { what: `${typeName}.${field}, the column ${table.table}.${column}, which ${MODEL_SOURCES.overlay} no longer serves under that name` };
  const added = (now?.columns ?? []).filter((c) => !table.catalog.columns.some((old) => old.name === c.name));
  const type = table.catalog.columns.find((c) => c.name === column)?.type;
  const candidate = added.find((c) => c.type === type) ?? added[0];
  const entry = { ...(overlay[table.table] ?? {}), rename: { ...(overlay[table.table]?.rename ?? {}), [candidate?.name ?? `<new column>`]: field } };
  const newColumns = added.length > 0 ? ` (${table.table} has the new column${added.length > 1 ? 's' : ''} ${added.map((c) => c.name).join(', ')})` : '';
  return {
    what: `${typeName}.${field}, the column ${table.table}.${column}, which the migrations no longer create${newColumns}`,
    rename: `${table.table}: ${entryText(entry)}`,
  };
}

/**
 * Why the fixed operations of the public API would not run on what the catalog `after` gives
 * (a migration that drops or renames a column they read, an overlay entry that hides one), each
 * as a message naming the operation, the field, the contract's field it fills and the two ways
 * out: serve the column under the public name (the overlay's `rename`), or change the contract.
 * `before` is the catalog the operations ran on (the committed one). Empty when they run.
 */
export function brokenOperations(before: Catalog, after: Catalog, overlay: Overlay, changedBy: readonly string[]): string[] {
  let model: ResourceModel;
  try {
    model = deriveModel(after, overlay);
  } catch {
    // The overlay's disagreements with the catalog are a message of their own (ModelError).
    return [];
  }
  const schema = createSchema(model);
  let old: { model: ResourceModel; schema: GraphQLSchema } | null = null;
  try {
    const oldModel = deriveModel(before, overlay);
    old = { model: oldModel, schema: createSchema(oldModel) };
  } catch {
    old = null;
  }
  const cause = changedBy.length > 0 ? changedBy.map((name) => `src/db/migrations/${name}.sql`).join(', ') : MODEL_SOURCES.overlay;
  const messages: string[] = [];
  for (const [name, source] of Object.entries(operationSources) as Array<[OperationName, string]>) {
    const document = parse(source);
    const errors = validate(schema, document);
    if (errors.length === 0) continue;
    const sample = old ? sampleResult(old.schema, document) : null;
    const landed = new Map<string, string>();
    if (sample) for (const item of PUBLIC_ANSWERS[name].represent(sample.data as never)) contractPaths(item, '', landed);
    for (const error of errors) {
      const node = error.nodes?.find((candidate): candidate is FieldNode => candidate.kind === Kind.FIELD);
      const place = node && sample?.placed.get(node);
      if (!old || !node || !place) {
        messages.push(`${cause} breaks the fixed operation ${name} of the public API (${OPERATIONS_FILE}): ${error.message} Serve the field again (${MODEL_SOURCES.overlay}: rename), or change the contract (${CONTRACT_FILE} first; docs/versioning.md).`);
        continue;
      }
      const change = whatChanged(old.model, after, overlay, place.parent, node.name.value);
      const fills = [...new Set(place.markers.map((marker) => landed.get(marker)).filter((path): path is string => path !== undefined))];
      const contract = fills.length > 0 ? ` It fills ${fills.map((path) => `${PUBLIC_ANSWERS[name].schema}.${path}`).join(', ')} of the public contract (${CONTRACT_FILE}).` : '';
      const keep = change.rename
        ? `keep the public name: serve the new column under it in ${MODEL_SOURCES.overlay}, ${change.rename}, then run npm run generate`
        : `keep the public name: serve the column under it again in ${MODEL_SOURCES.overlay} (rename, hide), then run npm run generate`;
      messages.push(
        `${cause} breaks the public API: the fixed operation ${name} (${OPERATIONS_FILE}) selects ${change.what}.${contract} Either\n` +
          `    - ${keep};\n` +
          `    - or change the contract: ${CONTRACT_FILE} first, then its reference text and CHANGELOG.md, then the operation in ${OPERATIONS_FILE} and src/graphql/public-representation.ts (docs/versioning.md).`,
      );
    }
  }
  return messages;
}
