import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { generateTypes, TYPES_FILE } from '../../examples/typed-client/generate-types.ts';

describe('the typed client example', () => {
  it('commits exactly the types openapi-typescript generates from the spec now (npm run generate:client)', async () => {
    const committed = await readFile(TYPES_FILE, 'utf8');
    expect(committed === (await generateTypes()), 'examples/typed-client/public-v1-types.ts is stale: run npm run generate:client').toBe(true);
  });
});
