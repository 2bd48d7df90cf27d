import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { resources } from '../../src/db/resources.ts';
import { ResourceRegistry, type RelationDefinition, type ResourceDefinition } from '../../src/db/resource-registry.ts';
import { importFixture } from '../../src/fixtures/import-fixture.ts';
import { loadTypeDefs } from '../../src/graphql/schema.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi } from '../support/public-api.ts';
import { contractFixture } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const MARKDOWN = readFileSync(new URL('../../docs/adding-a-resource.md', import.meta.url), 'utf8');
const blocks = (language: string) => [...MARKDOWN.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]!);

/** The page's TypeScript snippets are object literals: evaluate them as such. */
const evaluate = (source: string): unknown => new Function(`return (${source.trim().replace(/,$/, '')});`)();

describeOnEachDatabase('docs/adding-a-resource.md, followed to the letter, on %s', (target) => {
  let db: Database;

  beforeAll(async () => {
    db = await openTestDatabase(target);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('serves the new resource from its migration, SDL and registry entry alone', async () => {
    const [migration] = blocks('sql');
    const [sdl, query, paged] = blocks('graphql');
    const [entry, relation] = blocks('ts');
    expect([migration, sdl, query, paged, entry, relation].every(Boolean)).toBe(true);

    await db.query(migration!.split('-- Down Migration')[0]!);
    const voucher = evaluate(entry!) as ResourceDefinition;
    const { vouchers } = evaluate(`{ ${relation!.trim().replace(/,$/, '')} }`) as { vouchers: RelationDefinition };
    const registry = new ResourceRegistry([
      ...resources.map((resource) => (resource.name === 'Workspace' ? { ...resource, relations: { ...resource.relations, vouchers } } : resource)),
      voucher,
    ]);
    registry.validate();

    const { workspaceId } = await importFixture(db, contractFixture('Vouchers', 1), {});
    await db.query(
      `INSERT INTO vouchers (workspace_id, code, percent_off, created_at) VALUES ($1, 'SPRING', 10, '2026-03-01'), ($1, 'SUMMER', 20, '2026-06-01'), ($1, 'AUTUMN', 30, '2026-09-01'), ($1, 'LATER', 40, '2027-03-01')`,
      [workspaceId],
    );

    const api = await startTestApi(db, {}, { registry, typeDefs: [...loadTypeDefs(), sdl!] });
    try {
      const result = await api.graphql(query!, { id: workspaceId });
      expect(result.body.errors).toBeUndefined();
      expect(result.body.data).toEqual({
        workspace: { vouchers: [{ code: 'LATER', percentOff: 40 }, { code: 'AUTUMN', percentOff: 30 }, { code: 'SUMMER', percentOff: 20 }, { code: 'SPRING', percentOff: 10 }] },
      });

      // The generated connection: pages of one, filtered on an int and a timestamp, newest first.
      type Page = { totalCount: number; edges: Array<{ cursor: string; node: { code: string } }>; pageInfo: { hasNextPage: boolean; endCursor: string } };
      const page = async (after: string | null) => {
        const answer = await api.graphql(paged!, { id: workspaceId, after });
        expect(answer.body.errors).toBeUndefined();
        return (answer.body.data as { workspace: { vouchersConnection: Page } }).workspace.vouchersConnection;
      };
      const first = await page(null);
      expect(first).toMatchObject({ totalCount: 2, edges: [{ node: { code: 'AUTUMN', percentOff: 30 } }], pageInfo: { hasNextPage: true } });
      const second = await page(first.pageInfo.endCursor);
      expect(second).toMatchObject({ totalCount: 2, edges: [{ node: { code: 'SUMMER', percentOff: 20 } }], pageInfo: { hasNextPage: false } });
      const id = (await db.query<{ id: string }>(`SELECT id FROM vouchers WHERE code = 'SPRING'`)).rows[0]!.id;
      expect(id).toMatch(/^vch_[0-9a-f]{32}$/);
      const root = await api.graphql(`query ($id: ID!) { voucher(id: $id) { code workspace { name } } }`, { id });
      expect(root.body.data).toEqual({ voucher: { code: 'SPRING', workspace: { name: 'Vouchers' } } });
    } finally {
      await api.close();
    }
  });
});
