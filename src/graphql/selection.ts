import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getDirectiveValues,
  type FieldNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  type InlineFragmentNode,
  type SelectionSetNode,
} from 'graphql';

/** What a resolver's info offers in graphql-js and graphql-jit alike. */
export interface SelectionInfo {
  readonly fieldNodes: readonly FieldNode[];
  readonly fragments: Record<string, FragmentDefinitionNode>;
  readonly variableValues: Record<string, unknown>;
}

const NONE: ReadonlySet<string> = new Set();

// Field nodes are stable per compiled query (graphql-jit) or per execution (graphql-js), and the
// variables per execution: the answer is computed once per field and execution, not per parent row.
const memo = new WeakMap<readonly FieldNode[], WeakMap<object, ReadonlySet<string>>>();

/**
 * Names of the fields selected under the resolved field, fragments included and `@skip` /
 * `@include` applied: a field excluded by a directive is not selected.
 */
export function selectedFields(info: SelectionInfo | undefined): ReadonlySet<string> {
  if (!info) return NONE;
  let byVariables = memo.get(info.fieldNodes);
  if (!byVariables) {
    byVariables = new WeakMap();
    memo.set(info.fieldNodes, byVariables);
  }
  const variables = info.variableValues ?? {};
  let names = byVariables.get(variables);
  if (!names) {
    const collected = new Set<string>();
    for (const node of info.fieldNodes) collect(node.selectionSet, info, collected, new Set());
    names = collected;
    byVariables.set(variables, names);
  }
  return names;
}

function collect(set: SelectionSetNode | undefined, info: SelectionInfo, names: Set<string>, visited: Set<string>): void {
  for (const selection of set?.selections ?? []) {
    if (!included(selection, info.variableValues)) continue;
    if (selection.kind === Kind.FIELD) {
      names.add(selection.name.value);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collect(selection.selectionSet, info, names, visited);
    } else if (!visited.has(selection.name.value)) {
      visited.add(selection.name.value);
      collect(info.fragments[selection.name.value]?.selectionSet, info, names, visited);
    }
  }
}

function included(node: FieldNode | InlineFragmentNode | FragmentSpreadNode, variables: Record<string, unknown>): boolean {
  if (!node.directives?.length) return true;
  if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
}
