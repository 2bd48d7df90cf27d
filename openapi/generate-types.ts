import { writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

export const SPEC_FILE = new URL('./public-v1.yaml', import.meta.url);
export const TYPES_FILE = new URL('../src/contract/public-v1-types.ts', import.meta.url);

const HEADER = `/**
 * Generated from openapi/public-v1.yaml by openapi-typescript: run \`npm run generate:types\`.
 * Do not edit; the suite fails when this file no longer matches the spec.
 */

`;

/** The contract's types as openapi-typescript generates them from the spec now. */
export async function generateTypes(): Promise<string> {
  return HEADER + astToString(await openapiTS(SPEC_FILE));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await writeFile(TYPES_FILE, await generateTypes());
  console.log(`wrote ${TYPES_FILE.pathname}`);
}
