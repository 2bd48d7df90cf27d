import { readFile } from 'node:fs/promises';
import { printSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_FILES } from '../../api-contracts/contracts.ts';
import type { Database } from '../../src/db/database.ts';
import { openTestDatabase } from '../support/databases.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';

describe('the served internal schema, printed beside the sources', () => {
  let db: Database;
  let api: TestApi;

  beforeAll(async () => {
    db = await openTestDatabase('embedded');
    api = await startTestApi(db);
  });
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  it('schema/internal.graphql is what printSchema prints of the executable schema the running service serves (npm run generate)', async () => {
    const committed = await readFile(CONTRACT_FILES.servedSchema, 'utf8');
    expect(committed === printSchema(api.server.schema), 'schema/internal.graphql is stale: run npm run generate').toBe(true);
  });
});
