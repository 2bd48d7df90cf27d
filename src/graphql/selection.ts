import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type InlineFragmentNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { PageWith } from '../loaders/loaders.ts';

/** What a resolver's info offers in graphql-js and graphql-jit alike. */
export interface SelectionInfo {
  readonly fieldNodes: readonly FieldNode[];
  readonly fragments: Record<string, FragmentDefinitionNode>;
  readonly variableValues: Record<string, unknown>;
  readonly returnType?: GraphQLOutputType;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * The names selected under a request's fields, worked out once per field and kept for the
 * request (its context holds one): every parent row of a field asks again, and the loaders keep
 * their plans by the set they get. Field nodes are stable per compiled query (graphql-jit) or per
 * execution (graphql-js); the variables, and with them `@skip` and `@include`, per request.
 */
export class Selections {
  readonly #fields = new WeakMap<readonly FieldNode[], ReadonlySet<string>>();
  readonly #nodeFields = new WeakMap<readonly FieldNode[], ReadonlySet<string>>();
  readonly #cursors = new WeakMap<readonly FieldNode[], boolean>();
  readonly #single = new WeakMap<FieldNode, readonly FieldNode[]>();

  /**
   * Names of the fields selected under the resolved field, fragments included and `@skip` /
   * `@include` applied: a field excluded by a directive is not selected.
   */
  fields(info: SelectionInfo | undefined): ReadonlySet<string> {
    if (!info) return NONE;
    let names = this.#fields.get(info.fieldNodes);
    if (!names) {
      const collected = new Set<string>();
      for (const node of info.fieldNodes) collect(node.selectionSet, info, collected, new Set());
      names = collected;
      this.#fields.set(info.fieldNodes, names);
    }
    return names;
  }

  /**
   * For a connection field: the names selected under `edges { node { … } }` and `nodes { … }`,
   * fragments included and directives applied, as `fields` gives them for a list field.
   */
  nodeFields(info: SelectionInfo): ReadonlySet<string> {
    let names = this.#nodeFields.get(info.fieldNodes);
    if (!names) {
      const under = new Map<string, FieldNode[]>();
      for (const node of info.fieldNodes) fieldsNamed(node.selectionSet, info, ['edges', 'nodes'], under, new Set());
      for (const edge of under.get('edges') ?? []) fieldsNamed(edge.selectionSet, info, ['node'], under, new Set());
      const collected = new Set<string>();
      for (const node of [...(under.get('node') ?? []), ...(under.get('nodes') ?? [])]) collect(node.selectionSet, info, collected, new Set());
      names = collected;
      this.#nodeFields.set(info.fieldNodes, names);
    }
    return names;
  }
  /**
   * For a connection field: whether a cursor is selected (`edges { cursor }`, `pageInfo {
   * startCursor endCursor }`), fragments included and directives applied. Without one, its
   * statement does not read the values cursors are made of.
   */
  /**
   * The one connection field selected under the resolved field (`relationOf` names its relation),
   * with its arguments and selection: its page can be read with the row. None when the selection
   * goes through fragments, holds two connections (or one twice, aliased) or has none.
   */
  pageUnder(info: SelectionInfo, relationOf: (field: string) => string | undefined): PageWith | undefined {
    const type = info.returnType && getNamedType(info.returnType);
    if (info.fieldNodes.length !== 1 || !isObjectType(type)) return undefined;
    let found: FieldNode | undefined;
    for (const selection of info.fieldNodes[0]!.selectionSet?.selections ?? []) {
      if (selection.kind !== Kind.FIELD) return undefined;
      if (!included(selection, info.variableValues) || relationOf(selection.name.value) === undefined) continue;
      if (found) return undefined;
      found = selection;
    }
    const definition = found && type.getFields()[found.name.value];
    if (!found || !definition) return undefined;
    let fieldNodes = this.#single.get(found);
    if (!fieldNodes) {
      fieldNodes = [found];
      this.#single.set(found, fieldNodes);
    }
    const nested = { fieldNodes, fragments: info.fragments, variableValues: info.variableValues };
    try {
      return { relationName: relationOf(found.name.value)!, args: getArgumentValues(definition, found, info.variableValues), selected: this.nodeFields(nested), cursors: this.cursors(nested) };
    } catch {
      // Arguments the field's own resolver is refused with.
      return undefined;
    }
  }

  cursors(info: SelectionInfo): boolean {
    let selected = this.#cursors.get(info.fieldNodes);
    if (selected === undefined) {
      selected = fieldsAt(info.fieldNodes, [['edges'], ['cursor']], info).length > 0 || fieldsAt(info.fieldNodes, [['pageInfo'], ['startCursor', 'endCursor']], info).length > 0;
      this.#cursors.set(info.fieldNodes, selected);
    }
    return selected;
  }

}

/** The field nodes with one of `names` under the fields named `path[0]`, then `path[1]`, … below `nodes`. */
function fieldsAt(nodes: readonly FieldNode[], path: readonly (readonly string[])[], info: SelectionInfo): FieldNode[] {
  let level: readonly FieldNode[] = nodes;
  for (const names of path) {
    const found = new Map<string, FieldNode[]>();
    for (const node of level) fieldsNamed(node.selectionSet, info, names, found, new Set());
    level = [...found.values()].flat();
  }
  return [...level];
}

/** The field nodes with one of `names` directly under `set`, through fragments, directives applied, by name. */
function fieldsNamed(set: SelectionSetNode | undefined, info: SelectionInfo, names: readonly string[], found: Map<string, FieldNode[]>, visited: Set<string>): void {
  for (const selection of set?.selections ?? []) {
    if (!included(selection, info.variableValues)) continue;
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (names.includes(name)) found.set(name, [...(found.get(name) ?? []), selection]);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      fieldsNamed(selection.selectionSet, info, names, found, visited);
    } else if (!visited.has(selection.name.value)) {
      visited.add(selection.name.value);
      fieldsNamed(info.fragments[selection.name.value]?.selectionSet, info, names, found, visited);
    }
  }
}

/**
 * Names selected under `set`, and one level further the names under each of them as
 * `field.name` (a field name holds no dot): a statement that reads a one-relation with its parent
 * reads the personal fields of it that are selected, and no other.
 */
function collect(set: SelectionSetNode | undefined, info: SelectionInfo, names: Set<string>, visited: Set<string>, prefix = ''): void {
  for (const selection of set?.selections ?? []) {
    if (!included(selection, info.variableValues)) continue;
    if (selection.kind === Kind.FIELD) {
      names.add(prefix + selection.name.value);
      if (prefix === '' && selection.selectionSet) collect(selection.selectionSet, info, names, new Set(), `${selection.name.value}.`);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collect(selection.selectionSet, info, names, visited, prefix);
    } else if (!visited.has(selection.name.value)) {
      visited.add(selection.name.value);
      collect(info.fragments[selection.name.value]?.selectionSet, info, names, visited, prefix);
    }
  }
}

/** Whether `@skip` and `@include` keep a selection, given the variables. */
export function included(node: FieldNode | InlineFragmentNode | FragmentSpreadNode, variables: Record<string, unknown>): boolean {
  if (!node.directives?.length) return true;
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
}

/** A field an operation selects, with the type it is selected on. */
export type SelectedField = (parent: GraphQLObjectType | GraphQLInterfaceType, field: GraphQLField<unknown, unknown>, node: FieldNode) => void;

/**
 * Visits every field an operation selects (through its fragments, each fragment once, `@skip` and
 * `@include` applied with the request's variables), with the type it is selected on: what the
 * internal endpoint asks of a document before it runs (personal data without the grant).
 */
export function eachSelectedField(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Record<string, unknown>, visit: SelectedField): void {
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  const root = schema.getRootType(operation.operation);
  if (!root) return;
  const visited = new Set<string>();
  const walk = (set: SelectionSetNode | undefined, parent: GraphQLCompositeType): void => {
    for (const selection of set?.selections ?? []) {
      if (!included(selection, variables)) continue;
      if (selection.kind === Kind.FIELD) {
        if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
        const field = parent.getFields()[selection.name.value];
        if (!field) continue;
        visit(parent, field, selection);
        const named = getNamedType(field.type);
        if (isCompositeType(named)) walk(selection.selectionSet, named);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (isCompositeType(condition)) walk(selection.selectionSet, condition);
      } else if (!visited.has(selection.name.value)) {
        visited.add(selection.name.value);
        const fragment = fragments[selection.name.value];
        const condition = fragment && schema.getType(fragment.typeCondition.name.value);
        if (fragment && isCompositeType(condition)) walk(fragment.selectionSet, condition);
      }
    }
  };
  walk(operation.selectionSet, root);
}
