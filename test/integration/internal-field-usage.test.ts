import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { catalog } from '../../src/model/catalog.generated.ts';
import { overlay } from '../../src/model/overlay.ts';
import { deriveModel } from '../../src/model/resource-model.ts';
import { cliOn } from '../support/cli.ts';
import { openTestDatabase } from '../support/databases.ts';
import { metricValue, postGraphQL } from '../support/internal-graphql.ts';
import { INTERNAL_TOKEN, startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const USES = 'internal_graphql_field_uses_total';

/** The service's model with `Workspace.createdAt` deprecated, as a maintainer marks a field in the overlay before removing it. */
const withDeprecatedField = () => deriveModel(catalog, { ...overlay, workspaces: { ...overlay.workspaces, deprecated: { createdAt: 'Read the first booking instead.' } } });

describeOnEachDatabase('field usage of the internal endpoint on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let reporting: string;
  const url = () => api.server.internalUrl!;
  const deprecatedLines = () =>
    api.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === 'deprecated field used');

  beforeAll(async () => {
    db = await openTestDatabase(target);
    ws = await seedWorkspace(db, contractFixture('Usage', 4));
    api = await startTestApi(db, {}, { model: withDeprecatedField() });
    reporting = (await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'reporting')).token;
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('counts one use per operation of each field it selects, through fragments, by type, field and token name, on /metrics', async () => {
    const query = `query Uses($id: ID!) { workspace(id: $id) { ...W name } } fragment W on Workspace { id name bookingsConnection(first: 2) { nodes { id __typename } } }`;
    const before = {
      name: await metricValue(url(), USES, { type: 'Workspace', field: 'name', token: 'reporting' }),
      nodeId: await metricValue(url(), USES, { type: 'Booking', field: 'id', token: 'reporting' }),
    };
    for (let i = 0; i < 3; i += 1) expect((await postGraphQL(url(), reporting, { query, variables: { id: ws.workspaceId } })).status).toBe(200);
    expect(await metricValue(url(), USES, { type: 'Workspace', field: 'name', token: 'reporting' })).toBe(before.name + 3);
    expect(await metricValue(url(), USES, { type: 'Booking', field: 'id', token: 'reporting' })).toBe(before.nodeId + 3);
    expect(await metricValue(url(), USES, { type: 'BookingConnection', field: 'nodes', token: 'reporting' })).toBeGreaterThanOrEqual(3);
    expect(await metricValue(url(), USES, { type: 'Query', field: 'workspace', token: 'reporting' })).toBeGreaterThanOrEqual(3);
    // Another token counts apart; a refused document counts nothing; GraphQL's own fields are not the schema's.
    await postGraphQL(url(), INTERNAL_TOKEN, { query, variables: { id: ws.workspaceId } });
    expect(await metricValue(url(), USES, { type: 'Workspace', field: 'name', token: 'bootstrap' })).toBeGreaterThanOrEqual(1);
    expect((await postGraphQL(url(), reporting, { query: `{ workspace(id: "${ws.workspaceId}") { name nope } }` })).status).toBe(400);
    expect(await metricValue(url(), USES, { type: 'Workspace', field: 'name', token: 'reporting' })).toBe(before.name + 3);
    const metrics = await (await fetch(`${url()}/metrics`, { headers: { authorization: `Bearer ${INTERNAL_TOKEN}` } })).text();
    expect(metrics).not.toMatch(/internal_graphql_field_uses_total\{[^}]*field="__typename"/);
  });

  it('logs a deprecated field used once per token and field, naming both, so that a maintainer knows who still reads it', async () => {
    const before = deprecatedLines().length;
    const query = `query Old($id: ID!) { workspace(id: $id) { createdAt } }`;
    for (let i = 0; i < 3; i += 1) expect((await postGraphQL(url(), reporting, { query, variables: { id: ws.workspaceId } })).status).toBe(200);
    await postGraphQL(url(), INTERNAL_TOKEN, { query, variables: { id: ws.workspaceId } });
    expect(deprecatedLines().slice(before)).toEqual([
      expect.objectContaining({ level: 40, tokenName: 'reporting', field: 'Workspace.createdAt', deprecationReason: 'Read the first booking instead.' }),
      expect.objectContaining({ level: 40, tokenName: 'bootstrap', field: 'Workspace.createdAt' }),
    ]);
    expect(await metricValue(url(), USES, { type: 'Workspace', field: 'createdAt', token: 'reporting' })).toBe(3);
  });
});
