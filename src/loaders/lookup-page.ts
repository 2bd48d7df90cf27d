import type { ResourceDefinition, ResourceRegistry } from '../model/resource-registry.ts';
import { buildLookupWithPage } from '../sql/sql-builder.ts';
import type { ConnectionPlan } from './plans.ts';
import { cachedStatement, compileRow, type PageReader, type Statement } from './statements.ts';

/** A lookup's statement that reads a connection page with each row, and how a page row is read from its rows. */
export interface LookupPageStatement {
  statement: Statement;
  page: Omit<PageReader, 'key'>;
}

const pageReaders = new WeakMap<Statement, LookupPageStatement['page']>();

/**
 * The statement of `lookupKey` that also reads `plan`'s page of each row it finds (generated
 * once per process and shape, as every statement is), or null when the lookup is not by the key or
 * the page's parent field is not among the fields it reads.
 */
export function lookupPageStatement(
  registry: ResourceRegistry,
  resource: ResourceDefinition,
  by: string,
  lookupKey: string,
  fields: readonly string[] | undefined,
  plan: ConnectionPlan,
): LookupPageStatement | null {
  // By a field that is not the key, one value may find several rows: each reads its page apart.
  if (by !== resource.key) return null;
  const parentField = plan.relation.localField;
  if (fields && parentField !== resource.key && !fields.includes(parentField)) return null;
  const statement = cachedStatement(registry, `${lookupKey}+${plan.statementKey}`, () =>
    buildLookupWithPage(registry, resource, by, { restricted: plan.query.restricted ?? false, ...(fields ? { fields } : {}) }, plan.relation, plan.query),
  );
  let page = pageReaders.get(statement);
  if (!page) {
    const query = statement.query as ReturnType<typeof buildLookupWithPage>;
    const target = registry.get(plan.relation.resource);
    page =
      query.pageRead === 'json'
        ? { as: 'json', toRow: compileRow(query.page, -1), at: query.pageFrom }
        : { as: 'rows', toRow: compileRow(query.page, query.pageFrom - 1), at: query.pageFrom - 1 + query.page.columns.indexOf(target.key) };
    pageReaders.set(statement, page);
  }
  return { statement, page };
}
