import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, isUnionType, type GraphQLSchema } from 'graphql';

/**
 * How many items each list of the introspection schema holds on average in `schema`, by
 * `__Type.field`, rounded up: the number of types and directives; the fields, interfaces,
 * possible types, enum values and input fields of a type; the arguments of a field or a directive.
 * The lists of `__schema { types { … } }` then count the schema's real numbers of items, and a
 * nested or aliased introspection costs about what it returns. (The longest list of each kind
 * would be a bound, but would count the standard introspection query at some forty times its size.)
 */
export function introspectionListLengths(schema: GraphQLSchema): ReadonlyMap<string, number> {
  const types = Object.values(schema.getTypeMap());
  const withFields = types.filter((type) => isObjectType(type) || isInterfaceType(type));
  const fields = withFields.flatMap((type) => Object.values(type.getFields()));
  const directives = schema.getDirectives();
  const perType = (count: number) => Math.max(1, Math.ceil(count / types.length));
  const sum = (counts: number[]) => counts.reduce((total, count) => total + count, 0);
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
  ]);
}
