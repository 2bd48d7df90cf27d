import { readFile } from 'node:fs/promises';
import { printSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_FILES } from '../../api-contracts/contracts.ts';
import { type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';

describe('the served internal schema, printed beside the sources', () => {
  let api: TestApi;

  beforeAll(async () => {
    ({ api } = await sharedTestApi('embedded'));
  });

  it('schema/internal.graphql is what printSchema prints of the executable schema the running service serves (npm run generate)', async () => {
    const committed = await readFile(CONTRACT_FILES.servedSchema, 'utf8');
    expect(committed === printSchema(api.server.schema), 'schema/internal.graphql is stale: run npm run generate').toBe(true);
  });
});
