import { isEnumType, isInputObjectType, isInterfaceType, isListType, isNonNullType, isObjectType, isUnionType, type GraphQLSchema, type GraphQLType } from 'graphql';

/** How many wrappers (non-null, list) a type reference has around its named type. */
function wrappers(type: GraphQLType): number {
  return isNonNullType(type) || isListType(type) ? 1 + wrappers(type.ofType) : 0;
}

/**
 * How many items each list of the introspection schema holds on average in `schema`, by
 * `__Type.field`, rounded up: the number of types and directives; the fields, interfaces,
 * possible types, enum values and input fields of a type; the arguments of a field or a directive.
 * The lists of `__schema { types { … } }` then count the schema's real numbers of items, and a
 * nested or aliased introspection costs about what it returns. (The longest list of each kind
 * would be a bound, but would count the standard introspection query at some forty times its size.)
 * `__Type.ofType`, one type or none, counts as the share of the schema's type references' levels
 * that wrap another: the `ofType` chains tools select seven levels deep then count the two or
 * three levels a reference has, not seven.
 */
export function introspectionListLengths(schema: GraphQLSchema): ReadonlyMap<string, number> {
  const types = Object.values(schema.getTypeMap());
  const withFields = types.filter((type) => isObjectType(type) || isInterfaceType(type));
  const fields = withFields.flatMap((type) => Object.values(type.getFields()));
  const directives = schema.getDirectives();
  const perType = (count: number) => Math.max(1, Math.ceil(count / types.length));
  const sum = (counts: number[]) => counts.reduce((total, count) => total + count, 0);
  const references = [
    ...fields.flatMap((field) => [field.type, ...field.args.map((arg) => arg.type)]),
    ...types.flatMap((type) => (isInputObjectType(type) ? Object.values(type.getFields()).map((input) => input.type) : [])),
  ];
  const wrapping = sum(references.map(wrappers));
  return new Map([
    ['__Schema.types', types.length],
    ['__Schema.directives', directives.length],
    ['__Type.fields', perType(fields.length)],
    ['__Type.interfaces', perType(sum(withFields.map((type) => type.getInterfaces().length)))],
    ['__Type.possibleTypes', perType(sum(types.map((type) => (isUnionType(type) || isInterfaceType(type) ? schema.getPossibleTypes(type).length : 0))))],
    ['__Type.enumValues', perType(sum(types.map((type) => (isEnumType(type) ? type.getValues().length : 0))))],
    ['__Type.inputFields', perType(sum(types.map((type) => (isInputObjectType(type) ? Object.keys(type.getFields()).length : 0))))],
    ['__Field.args', Math.max(1, Math.ceil(sum(fields.map((field) => field.args.length)) / Math.max(1, fields.length)))],
    ['__Directive.args', Math.max(1, Math.ceil(sum(directives.map((directive) => directive.args.length)) / Math.max(1, directives.length)))],
    ['__Type.ofType', wrapping / Math.max(1, wrapping + references.length)],
  ]);
}
