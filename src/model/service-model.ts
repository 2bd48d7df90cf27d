import { catalogDifferences, readCatalog } from './catalog.ts';
import { catalog } from './catalog.generated.ts';
import type { Queryable } from '../db/database.ts';
import { SHIPPED_MIGRATIONS } from '../db/migrate.ts';
import { overlay } from './overlay.ts';
import { deriveModel, type ResourceModel } from './resource-model.ts';

let model: ResourceModel | undefined;

/**
 * The service's resources: the catalog this build was generated from, with the overlay. Both are
 * compiled into the same build, so a running service never pairs a schema with another build's
 * registry; the migrations it applies are checked against the catalog by `staleBuild`.
 */
export function serviceModel(): ResourceModel {
  model ??= deriveModel(catalog, overlay);
  return model;
}

/**
 * Why this build cannot serve the migrations beside it, or null: a migration was added, removed
 * or renamed since `catalog.generated.ts` was generated (run `npm run generate`) or since this
 * build was made (run `npm run build`).
 */
export function staleBuild(): string | null {
  const missing = SHIPPED_MIGRATIONS.filter((name) => !catalog.migrations.includes(name));
  const gone = catalog.migrations.filter((name) => !SHIPPED_MIGRATIONS.includes(name));
  if (missing.length === 0 && gone.length === 0) return null;
  const what = [missing.length > 0 ? `src/db/migrations has ${missing.join(', ')}, which the build's catalog does not know` : '', gone.length > 0 ? `the build's catalog knows ${gone.join(', ')}, which src/db/migrations lacks` : '']
    .filter(Boolean)
    .join('; ');
  return `This build is older than its migrations (${what}): run npm run generate (to regenerate src/model/catalog.generated.ts), then npm run build.`;
}

/**
 * What the database serving this build lacks or holds otherwise than the catalog it was built
 * from, for the tables the overlay serves: a line per table, column, key or enum, each naming it
 * (a column altered or dropped by hand, a database restored from another release). Empty when
 * they agree.
 */
export async function databaseDifferences(db: Queryable, model: ResourceModel): Promise<string[]> {
  return catalogDifferences(model.catalog, await readCatalog(db), { tables: [...model.tables.keys()], structure: true });
}
