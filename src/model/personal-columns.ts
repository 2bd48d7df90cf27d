import type { CatalogTable } from './catalog.ts';
import type { Link } from './links.ts';
import type { FieldDefinition } from './resource-registry.ts';

/** What these checks read of a table of the model (`ModelTable` in resource-model.ts). */
interface ModelTable {
  table: string;
  overlay: {
    personalData?: boolean | string[];
    hide?: string[];
    order?: string[];
    workspace?: string | { through: string } | null;
    lists?: Record<string, { of: string; by: string }>;
  };
  catalog: Pick<CatalogTable, 'primaryKey'>;
  fields: Record<string, FieldDefinition>;
  fieldOf: ReadonlyMap<string, string>;
}

type Report = (table: string, what: string) => void;

/**
 * Marks the fields of the columns the overlay names as personal data (`personalData: ['email']`);
 * a table that is personal data as a whole (`personalData: true`) needs no mark on its fields.
 * A column the catalog lacks is reported by `missing`, a hidden one here.
 */
export function markPersonalColumns(model: ModelTable, at: Report, missing: (column: string) => void): void {
  const named = model.overlay.personalData;
  if (!Array.isArray(named)) return;
  for (const column of named) {
    const field = model.fieldOf.get(column);
    if (field) model.fields[field] = { ...model.fields[field]!, personal: true };
    else if (model.overlay.hide?.includes(column)) at(model.table, `personalData names "${column}", which hide keeps from being served: a hidden column is never read, so leave it out of personalData`);
    else missing(column);
  }
}

/**
 * A personal column may only be read and shown, never be what rows are found, joined, restricted
 * or paged by: a caller without the personal-data grant still pages lists, follows relations and
 * is restricted to workspaces, and a list's cursors carry the values of its order. Each such use
 * is reported, naming the column and what uses it.
 */
export function checkPersonalColumns(tables: ReadonlyMap<string, ModelTable>, allLinks: readonly Link[], at: Report): void {
  for (const model of tables.values()) {
    const named = model.overlay.personalData;
    if (!Array.isArray(named)) continue;
    const keyColumn = model.catalog.primaryKey[0];
    const order = new Set((model.overlay.order ?? []).map((spec) => spec.replace(/^-/, '')));
    for (const column of named) {
      if (!model.fieldOf.has(column)) continue;
      const uses: string[] = [];
      if (column === keyColumn) uses.push('it is the key of the table (mark the whole table with personalData: true instead)');
      if (column === 'workspace_id' || model.overlay.workspace === column) uses.push('it places rows in their workspace');
      // Each foreign key gives a link at each end, so this finds a column that references and one that is referenced.
      for (const link of allLinks) if (link.owner === model.table && link.localColumn === column) uses.push(`the relation ${link.name} joins on it`);
      if (order.has(column)) uses.push("order sorts by it, and a list's cursors carry the values it sorts by");
      for (const other of tables.values()) {
        for (const [name, list] of Object.entries(other.overlay.lists ?? {})) {
          if (list.of === model.table && list.by === column) uses.push(`${other.table}.lists.${name} is made of the rows where it is set`);
        }
      }
      for (const use of new Set(uses)) at(model.table, `personalData names "${column}", but ${use}: a caller without the personal-data grant would read it that way`);
    }
  }
}
