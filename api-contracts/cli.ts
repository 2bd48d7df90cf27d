/**
 * `npm run api:check`: the breaking changes of both contracts since their last release, each
 * acknowledged or not. `npm run api:release`: the current contracts become the released ones. The
 * internal schema itself is printed by `npm run generate` (schema/internal.graphql).
 */
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { CONTRACT_FILES, RELEASED_SCHEMA_HEADER, checkContracts, describeProblems } from './contracts.ts';

const EMPTY_ACKNOWLEDGEMENTS = `# Breaking changes since the last release (api-contracts/released/), each acknowledged by a
# reviewer with a reason. \`npm test\` fails on a breaking change of the internal GraphQL schema or
# of openapi/public-v1.yaml that is not listed here, and on an entry that no change matches.
# \`npm run api:check\` prints each change with the entry that acknowledges it, e.g.:
#
# graphql:
#   - kind: FIELD_REMOVED
#     at: Workspace.createdAt
#     reason: Deprecated since 2026-09 and read by no token for 30 days (internal_graphql_field_uses_total).
# openapi:
#   - kind: prevent removing response property
#     at: "GET /api/public/v1/courses response 200 response body: application/json property data/items/description"
#     reason: Announced as Deprecated in 1.0.0-beta.2; removed in 1.0.0-beta.3.
#
# \`npm run api:release\` copies both contracts to api-contracts/released/ and empties the lists.
graphql: []
openapi: []
`;

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--check')) {
    const problems = describeProblems(await checkContracts());
    for (const problem of problems) console.error(problem);
    console.log(problems.length === 0 ? 'No unacknowledged breaking change since the last release.' : `${problems.length} problem(s).`);
    return problems.length === 0 ? 0 : 1;
  }
  if (!argv.includes('--release')) {
    console.error('Give --check or --release.');
    return 1;
  }
  await writeFile(CONTRACT_FILES.releasedSchema, RELEASED_SCHEMA_HEADER + (await readFile(CONTRACT_FILES.servedSchema, 'utf8')));
  await copyFile(CONTRACT_FILES.openapi, CONTRACT_FILES.releasedOpenapi);
  await writeFile(CONTRACT_FILES.acknowledgements, EMPTY_ACKNOWLEDGEMENTS);
  console.log('copied both contracts to api-contracts/released/ and emptied api-contracts/breaking-changes.yaml');
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
