import { Kind, parse, type FieldNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { Selections, type SelectionInfo } from '../../src/graphql/selection.ts';

/**
 * The info a resolver of the operation's first root field gets: every root field node with that
 * name (a field asked twice is resolved once with both nodes), the fragments and the variables.
 */
function infoFor(source: string, variableValues: Record<string, unknown> = {}): SelectionInfo {
  const document = parse(source);
  const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)!;
  const fields = operation.selectionSet.selections.filter((selection): selection is FieldNode => selection.kind === Kind.FIELD);
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  }
  return { fieldNodes: fields.filter((field) => field.name.value === fields[0]!.name.value), fragments, variableValues };
}

const sorted = (names: ReadonlySet<string>): string[] => [...names].sort();

/** The selection of one field as a request of its own sees it. */
const selectedFields = (info: SelectionInfo | undefined) => new Selections().fields(info);

describe('Selections.fields', () => {
  it('names the fields selected directly under the resolved field, and one level further as field.name, no deeper', () => {
    const info = infoFor('{ workspace(id: "w") { id name courses { title sessions { startsAt } } } }');
    expect(sorted(selectedFields(info))).toEqual(['courses', 'courses.sessions', 'courses.title', 'id', 'name']);
  });

  it('names a field by its name, not by its alias', () => {
    const info = infoFor('{ workspace(id: "w") { key: id title: name } }');
    expect(sorted(selectedFields(info))).toEqual(['id', 'name']);
  });

  it('counts __typename as a selected name like any other field', () => {
    expect(sorted(selectedFields(infoFor('{ workspace(id: "w") { __typename id } }')))).toEqual(['__typename', 'id']);
  });

  it('is empty without info and for a field without a selection set', () => {
    expect(selectedFields(undefined).size).toBe(0);
    expect(selectedFields(infoFor('{ ping }')).size).toBe(0);
  });

  it('joins the selections of every node of a field asked more than once', () => {
    const info = infoFor('{ workspace(id: "w") { id } workspace(id: "w") { name } }');
    expect(info.fieldNodes).toHaveLength(2);
    expect(sorted(selectedFields(info))).toEqual(['id', 'name']);
  });

  it('includes the fields of inline fragments, with or without a type condition, nested too', () => {
    const info = infoFor('{ workspace(id: "w") { id ... on Workspace { name ... { createdAt } } ... { courses { id } } } }');
    expect(sorted(selectedFields(info))).toEqual(['courses', 'courses.id', 'createdAt', 'id', 'name']);
  });

  it('includes the fields of named fragment spreads and of the fragments they spread', () => {
    const info = infoFor(`
      { workspace(id: "w") { id ...Parts } }
      fragment Parts on Workspace { name bookings { source } ...More }
      fragment More on Workspace { createdAt }
    `);
    expect(sorted(selectedFields(info))).toEqual(['bookings', 'bookings.source', 'createdAt', 'id', 'name']);
  });

  it('reads a fragment spread twice, or spreading itself through another, once', () => {
    const info = infoFor(`
      { workspace(id: "w") { ...A ... on Workspace { ...A } ...B } }
      fragment A on Workspace { id ...B }
      fragment B on Workspace { name ...A }
    `);
    const reads: string[] = [];
    const counted: SelectionInfo = {
      ...info,
      fragments: new Proxy(info.fragments, {
        get: (target, name: string) => {
          reads.push(name);
          return target[name];
        },
      }),
    };
    expect(sorted(selectedFields(counted))).toEqual(['id', 'name']);
    expect(reads).toEqual(['A', 'B']);
  });

  it('ignores a spread of a fragment the document does not define', () => {
    expect(sorted(selectedFields(infoFor('{ workspace(id: "w") { id ...Missing } }')))).toEqual(['id']);
  });

  it('leaves out a field whose @include variable is false and keeps it when true', () => {
    const source = 'query ($withName: Boolean!) { workspace(id: "w") { id name @include(if: $withName) } }';
    expect(sorted(selectedFields(infoFor(source, { withName: true })))).toEqual(['id', 'name']);
    expect(sorted(selectedFields(infoFor(source, { withName: false })))).toEqual(['id']);
  });

  it('leaves out a field whose @skip variable is true and keeps it when false', () => {
    const source = 'query ($skipName: Boolean!) { workspace(id: "w") { id name @skip(if: $skipName) } }';
    expect(sorted(selectedFields(infoFor(source, { skipName: true })))).toEqual(['id']);
    expect(sorted(selectedFields(infoFor(source, { skipName: false })))).toEqual(['id', 'name']);
  });

  it('applies literal directive arguments, and @skip wins over @include when both are on a field', () => {
    const info = infoFor(`{ workspace(id: "w") {
      id @include(if: true)
      name @include(if: false)
      createdAt @skip(if: false)
      courses @skip(if: true)
      bookings @skip(if: true) @include(if: true)
      courseRuns @skip(if: false) @include(if: true)
      courseTemplates @skip(if: false) @include(if: false)
    } }`);
    expect(sorted(selectedFields(info))).toEqual(['courseRuns', 'createdAt', 'id']);
  });

  it('applies @include and @skip on inline fragments and fragment spreads', () => {
    const source = `
      query ($on: Boolean!) { workspace(id: "w") { id ... @include(if: $on) { name } ...Parts @skip(if: $on) } }
      fragment Parts on Workspace { createdAt }
    `;
    expect(sorted(selectedFields(infoFor(source, { on: true })))).toEqual(['id', 'name']);
    expect(sorted(selectedFields(infoFor(source, { on: false })))).toEqual(['createdAt', 'id']);
  });

  it('keeps a field excluded in one place when it is selected in another', () => {
    const info = infoFor('query ($no: Boolean!) { workspace(id: "w") { name @include(if: $no) ... { name } } }', { no: false });
    expect(sorted(selectedFields(info))).toEqual(['name']);
  });

  it('reads a fragment skipped at one spread at another spread that is included', () => {
    const info = infoFor(`
      { workspace(id: "w") { ...Parts @skip(if: true) ... { ...Parts } } }
      fragment Parts on Workspace { name }
    `);
    expect(sorted(selectedFields(info))).toEqual(['name']);
  });

  it('gives every parent row of a field in one request the same set object, computed once', () => {
    const info = infoFor('query ($withName: Boolean!) { workspace(id: "w") { id name @include(if: $withName) } }', { withName: true });
    const request = new Selections();
    const first = request.fields(info);
    expect(request.fields({ ...info })).toBe(first);
    expect(sorted(first)).toEqual(['id', 'name']);
    expect(request.fields({ ...info, fieldNodes: [...info.fieldNodes] })).not.toBe(first);
  });

  it('keeps requests apart: the same compiled field nodes with other variables give another request its own selection', () => {
    const info = infoFor('query ($withName: Boolean!) { workspace(id: "w") { id name @include(if: $withName) } }', { withName: true });
    const one = new Selections();
    const other = new Selections();
    // One variables object shared by both, as an executor that reuses it would share it.
    const variables: Record<string, unknown> = { withName: true };
    const first = one.fields({ ...info, variableValues: variables });
    variables.withName = false;
    const second = other.fields({ ...info, variableValues: variables });
    expect(sorted(first)).toEqual(['id', 'name']);
    expect(sorted(second)).toEqual(['id']);
  });
});
