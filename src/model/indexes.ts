import type { CatalogTable } from './catalog.ts';
import type { IndexDefinition } from './resource-registry.ts';

/**
 * The catalog's indexes of a table as fields: those on served columns, whole or partial on a column
 * being set (`(listed_from IS NOT NULL)`), the only predicate a list's statement implies.
 */
export function indexesOf(model: { catalog: CatalogTable; fieldOf: ReadonlyMap<string, string> }): IndexDefinition[] {
  const found: IndexDefinition[] = [];
  for (const index of model.catalog.indexes ?? []) {
    if (!index.columns) continue;
    const terms = index.columns.map((spec) => {
      const [column, order] = spec.split(' ');
      return { field: model.fieldOf.get(column!), direction: order === 'DESC' ? ('desc' as const) : ('asc' as const) };
    });
    if (terms.some((term) => term.field === undefined)) continue;
    const set = index.where === undefined ? undefined : /^\((\w+) IS NOT NULL\)$/.exec(index.where)?.[1];
    if (index.where !== undefined && (set === undefined || !model.fieldOf.has(set))) continue;
    found.push({ name: index.name, terms: terms as IndexDefinition['terms'], ...(set ? { whereSet: model.fieldOf.get(set)! } : {}) });
  }
  return found;
}
