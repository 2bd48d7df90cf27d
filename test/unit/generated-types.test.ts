import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generateTypes, TYPES_FILE } from '../../openapi/generate-types.ts';

describe('the types generated from the spec', () => {
  it('are committed exactly as openapi-typescript generates them from openapi/public-v1.yaml now (npm run generate:types)', async () => {
    const committed = await readFile(TYPES_FILE, 'utf8');
    expect(committed === (await generateTypes()), 'src/contract/public-v1-types.ts is stale: run npm run generate:types').toBe(true);
  });
});
