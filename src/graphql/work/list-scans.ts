import type { RelationDefinition, ResourceRegistry } from '../../model/resource-registry.ts';
import { connectionOrder, type FilterTerm } from '../../sql/sql-builder.ts';

/** What one statement of a list reads for each parent row, by the indexes of its table. */
export interface ListScan {
  /** The index that leads with the list's parent column, then its order: a page reads its own rows. Null: none does. */
  orderedBy: string | null;
  /** Filter conditions that index does not serve: the page may read every row of its parent to find its rows. */
  unserved: FilterTerm[];
  /** No index leads with the parent column: every statement reads the whole table. */
  wholeTable: boolean;
}

/**
 * How the statement of `relation`'s page reads (see `buildConnectionQuery`): an index whose
 * columns are the parent column, then columns the filter fixes with `eq`, then the list's order
 * (or all of it reversed) reads a page's rows, and serves a range on the order's first column too;
 * any other condition is checked row by row as the index is walked.
 */
export function listScan(registry: ResourceRegistry, relation: RelationDefinition, filter: readonly FilterTerm[]): ListScan {
  const target = registry.get(relation.resource);
  const order = connectionOrder(registry, relation);
  const leading = (target.indexes ?? []).filter((index) => index.terms[0]?.field === relation.foreignField && (index.whereSet === undefined || index.whereSet === relation.present));
  if (leading.length === 0) return { orderedBy: null, unserved: [...filter], wholeTable: true };
  const fixed = new Set(filter.filter(([, operator]) => operator === 'eq').map(([field]) => field));
  let best: ListScan | null = null;
  for (const index of leading) {
    let at = 1;
    const skipped = new Set<string>();
    while (at < index.terms.length && fixed.has(index.terms[at]!.field) && index.terms[at]!.field !== order[0]!.term.field) skipped.add(index.terms[at++]!.field);
    const rest = index.terms.slice(at, at + order.length);
    const same = rest.length === order.length && rest.every((term, i) => term.field === order[i]!.term.field);
    const flipped = same && rest.every((term, i) => term.direction !== order[i]!.direction);
    if (!same || !(flipped || rest.every((term, i) => term.direction === order[i]!.direction))) continue;
    const unserved = filter.filter(([field, operator]) => !(skipped.has(field) && operator === 'eq') && field !== order[0]!.term.field);
    if (!best || unserved.length < best.unserved.length) best = { orderedBy: index.name, unserved, wholeTable: false };
  }
  return best ?? { orderedBy: null, unserved: [...filter], wholeTable: false };
}
