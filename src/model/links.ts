import type { Catalog } from './catalog.ts';
import { camelCase, lowerFirst, pascalCase, relationOfColumn } from './naming.ts';

/**
 * A relation between two served tables, from one foreign key: each key gives one to each end,
 * as PostGraphile's relations plugin does. `sessions.course_run_id → course_runs.id` gives
 * `Session.courseRun` (forward, one) and `CourseRun.sessions` (backward, many; one when the key's
 * column is unique, as `participants.booking_id` is).
 */
export interface Link {
  /** The name it is served under, unless the overlay renames it. */
  name: string;
  /** The table whose field the relation is. */
  owner: string;
  /** The related table. */
  table: string;
  kind: 'one' | 'many';
  direction: 'forward' | 'backward';
  /** The owner's column matched against `foreignColumn` of the related table. */
  localColumn: string;
  foreignColumn: string;
  /** A `one` relation that may find no row. */
  optional: boolean;
  /** The foreign key's name, for messages. */
  foreignKey: string;
  description?: string;
  /** A named list: only rows whose column of this name is set, ordered by `order`. */
  present?: string;
  order?: string[];
}

/** A foreign key that names a workspace beside its reference (`(workspace_id, course_run_id)`) relates by the reference alone. */
const WORKSPACE_COLUMN = 'workspace_id';

/** The links between the served tables, and the foreign keys between them that cannot be one (several columns). */
export function links(catalog: Catalog, served: readonly string[], typeOf: ReadonlyMap<string, string>): { links: Link[]; composite: Array<{ owner: string; name: string; foreignKey: string }> } {
  const found: Link[] = [];
  const composite: Array<{ owner: string; name: string; foreignKey: string }> = [];
  const isServed = new Set(served);
  for (const table of served) {
    const source = catalog.tables[table]!;
    for (const key of source.foreignKeys) {
      if (!isServed.has(key.table)) continue;
      let pairs = key.columns.map((column, index) => [column, key.references[index]!] as const);
      if (pairs.length > 1) pairs = pairs.filter(([column, reference]) => !(column === WORKSPACE_COLUMN && reference === WORKSPACE_COLUMN));
      const forwardName = pairs.length === 1 ? (relationOfColumn(pairs[0]![0]) ?? lowerFirst(typeOf.get(key.table)!)) : lowerFirst(typeOf.get(key.table)!);
      if (pairs.length !== 1) {
        composite.push({ owner: table, name: forwardName, foreignKey: key.name });
        continue;
      }
      const [column, reference] = pairs[0]!;
      const unique =
        (source.primaryKey.length === 1 && source.primaryKey[0] === column) ||
        source.uniques.some((u) => !u.partial && u.columns?.length === 1 && u.columns[0] === column);
      found.push({
        name: forwardName,
        owner: table,
        table: key.table,
        kind: 'one',
        direction: 'forward',
        localColumn: column,
        foreignColumn: reference,
        optional: source.columns.find((c) => c.name === column)!.nullable,
        foreignKey: key.name,
        ...(key.description ? { description: key.description } : {}),
      });
      found.push({
        name: unique ? lowerFirst(typeOf.get(table)!) : camelCase(table),
        owner: key.table,
        table,
        kind: unique ? 'one' : 'many',
        direction: 'backward',
        localColumn: reference,
        foreignColumn: column,
        optional: true,
        foreignKey: key.name,
      });
    }
  }
  // Two keys of one table to the same table would give its rows two relations of one name.
  const byName = new Map<string, Link[]>();
  for (const link of found) byName.set(`${link.owner}.${link.name}`, [...(byName.get(`${link.owner}.${link.name}`) ?? []), link]);
  for (const same of byName.values()) {
    if (same.length < 2) continue;
    for (const link of same) link.name = `${link.name}By${pascalCase(link.direction === 'forward' ? link.localColumn : link.foreignColumn)}`;
  }
  return { links: found, composite };
}
