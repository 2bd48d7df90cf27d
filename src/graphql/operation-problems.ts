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
import type { Catalog } from '../model/catalog.ts';
import { camelCase } from '../model/naming.ts';
import { MODEL_SOURCES, deriveModel, type Overlay, type ResourceModel, type TableOverlay } from '../model/resource-model.ts';
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
 * naming it, each list one item, each enum its first value, a field the schema lacks a marker (or
 * an object of markers); and, for each field node, its parent type and the markers under it.
 */
function sampleResult(schema: GraphQLSchema, document: DocumentNode): { data: Record<string, unknown>; placed: Map<FieldNode, Placed> } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const placed = new Map<FieldNode, Placed>();
  let next = 0;
  const marker = (markers: string[]) => {
    const made = `\u0001${(next += 1)}`;
    markers.push(made);
    return made;
  };
  const valueOf = (type: GraphQLOutputType | undefined, node: FieldNode, markers: string[]): unknown => {
    if (!type) return node.selectionSet ? objectOf(node.selectionSet, '', markers) : marker(markers);
    if (isNonNullType(type)) return valueOf(type.ofType, node, markers);
    if (isListType(type)) return [valueOf(type.ofType, node, markers)];
    if (isObjectType(type) || isInterfaceType(type)) return objectOf(node.selectionSet, type.name, markers);
    if (isEnumType(type)) return type.getValues()[0]?.name;
    return marker(markers);
  };
  const objectOf = (set: SelectionSetNode | undefined, typeName: string, outer: string[]): Record<string, unknown> => {
    const object: Record<string, unknown> = {};
    const type = schema.getType(typeName);
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[selection.name.value] : undefined;
        const markers: string[] = [];
        object[selection.alias?.value ?? selection.name.value] = valueOf(field?.type, selection, markers);
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

/** An overlay entry as it is written in src/model/overlay.ts. */
function entryText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(entryText).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const parts = Object.entries(value).map(([key, item]) => `${/^[A-Za-z_]\w*$/.test(key) ? key : `'${key}'`}: ${entryText(item)}`);
    return parts.length > 0 ? `{ ${parts.join(', ')} }` : '{}';
  }
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/** What became of the column `typeName.field` was served from, and the overlay entry that serves it under that name again. */
function whatChanged(before: ResourceModel | null, after: ResourceModel, overlay: Overlay, typeName: string, field: string): { what: string; keep: string } {
  const generic = { what: `${typeName}.${field}, which the schema no longer has`, keep: `serve a column under that name again in ${MODEL_SOURCES.overlay} (rename)` };
  const table = [...after.tables.values()].find((model) => model.type === typeName);
  if (!table) return generic;
  const old = before?.tables.get(table.table);
  const column = old?.fields[field]?.column ?? table.catalog.columns.find((c) => camelCase(c.name) === field)?.name;
  if (!column) return generic;
  const entry = (changes: TableOverlay) => `${table.table}: ${entryText({ ...(overlay[table.table] ?? {}), ...changes })}`;
  const named = `${typeName}.${field}, the column ${table.table}.${column}`;
  if (table.catalog.columns.some((c) => c.name === column)) {
    const hide = overlay[table.table]?.hide ?? [];
    if (hide.includes(column)) {
      const rest = hide.filter((hidden) => hidden !== column);
      const { hide: _hide, ...others } = overlay[table.table] ?? {};
      return { what: `${named}, which ${MODEL_SOURCES.overlay} hides`, keep: `serve it again: ${rest.length > 0 ? entry({ hide: rest }) : `${table.table}: ${entryText(others)}`}` };
    }
    return { what: `${named}, which ${MODEL_SOURCES.overlay} serves under another name`, keep: `serve it under ${field} again in ${MODEL_SOURCES.overlay} (rename)` };
  }
  const added = table.catalog.columns.filter((c) => !(old ?? table).catalog.columns.some((known) => known.name === c.name));
  const type = old?.catalog.columns.find((c) => c.name === column)?.type;
  const candidate = added.find((c) => c.type === type) ?? added[0];
  const rename = { ...(overlay[table.table]?.rename ?? {}), [candidate?.name ?? '<new column>']: field };
  const newColumns = added.length > 0 ? ` (${table.table} has the new column${added.length > 1 ? 's' : ''} ${added.map((c) => c.name).join(', ')})` : '';
  return { what: `${named}, which the migrations no longer create${newColumns}`, keep: `serve the new column under it in ${MODEL_SOURCES.overlay}, ${entry({ rename })}` };
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
  let old: ResourceModel | null = null;
  try {
    old = deriveModel(before, overlay);
  } catch {
    // The committed catalog with today's overlay: the columns are then named from the new catalog alone.
  }
  const cause = changedBy.length > 0 ? changedBy.map((name) => `src/db/migrations/${name}.sql`).join(', ') : MODEL_SOURCES.overlay;
  const messages: string[] = [];
  for (const [name, source] of Object.entries(operationSources) as Array<[OperationName, string]>) {
    const document = parse(source);
    const errors = validate(schema, document);
    if (errors.length === 0) continue;
    const sample = sampleResult(schema, document);
    const landed = new Map<string, string>();
    try {
      for (const item of PUBLIC_ANSWERS[name].represent(sample.data as never)) contractPaths(item, '', landed);
    } catch {
      // A result the public representation cannot take names no contract field; the message says the rest.
    }
    for (const error of errors) {
      const node = error.nodes?.find((candidate): candidate is FieldNode => candidate.kind === Kind.FIELD);
      const place = node && sample.placed.get(node);
      const change = place ? whatChanged(old, model, overlay, place.parent, node.name.value) : { what: `what it selects: ${error.message}`, keep: `serve it again in ${MODEL_SOURCES.overlay}` };
      const fills = [...new Set((place?.markers ?? []).map((marker) => landed.get(marker)).filter((path): path is string => path !== undefined))];
      const contract = fills.length > 0 ? ` It fills ${fills.map((path) => `${PUBLIC_ANSWERS[name].schema}.${path}`).join(', ')} of the public contract (${CONTRACT_FILE}).` : '';
      messages.push(
        `${cause} breaks the public API: the fixed operation ${name} (${OPERATIONS_FILE}) selects ${change.what}.${contract} Either\n` +
          `    - keep the public name: ${change.keep}, then run npm run generate;\n` +
          `    - or change the contract: ${CONTRACT_FILE} first, then its reference text and CHANGELOG.md, then the operation in ${OPERATIONS_FILE} and src/graphql/public-representation.ts (docs/versioning.md).`,
      );
    }
  }
  return messages;
}
