import { TypeInfo, getNamedType, parse, visit, visitWithTypeInfo, type GraphQLSchema } from 'graphql';
import type { ResourceRegistry } from '../model/resource-registry.ts';

/**
 * The resources an operation can read, every `@include` taken: each field whose type is a
 * resource's. The response cache is exact only for tables whose changes move the data version,
 * so the tables of the cached operations' resources are the ones that need the data-version
 * triggers (`track_data_versions`), and no other table does.
 */
export function resourcesRead(schema: GraphQLSchema, registry: ResourceRegistry, source: string): Set<string> {
  const read = new Set<string>();
  const typeInfo = new TypeInfo(schema);
  visit(
    parse(source),
    visitWithTypeInfo(typeInfo, {
      Field() {
        const type = typeInfo.getType();
        const name = type ? getNamedType(type).name : null;
        if (name && registry.has(name)) read.add(name);
      },
    }),
  );
  return read;
}
