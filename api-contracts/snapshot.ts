import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { GraphQLSchema } from 'graphql';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startServer } from '../src/server.ts';
import { CONTRACT_FILES, RELEASED_SCHEMA_HEADER, checkContracts, describeProblems, printServedSchema, withoutHeader } from './contracts.ts';

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

/** The executable schema a service started as \`npm start\` starts it serves (on a throwaway embedded database). */
async function servedSchema(): Promise<GraphQLSchema> {
  const dataDir = await mkdtemp(join(tmpdir(), 'api-snapshot-'));
  const config = loadConfig({
    PORT: '0',
    INTERNAL_PORT: '0',
    INTERNAL_API_TOKEN: randomBytes(24).toString('hex'),
    DATA_DIR: dataDir,
    DEMO: 'false',
    WEBHOOK_WORKER: 'false',
    OTEL_SDK_DISABLED: 'true',
    LOG_LEVEL: 'silent',
  });
  const server = await startServer({ config, logger: createLogger('silent') });
  try {
    return server.schema;
  } finally {
    await server.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--check')) {
    const problems = describeProblems(await checkContracts());
    for (const problem of problems) console.error(problem);
    console.log(problems.length === 0 ? 'No unacknowledged breaking change since the last release.' : `${problems.length} problem(s).`);
    return problems.length === 0 ? 0 : 1;
  }
  await writeFile(CONTRACT_FILES.servedSchema, printServedSchema(await servedSchema()));
  console.log(`wrote ${CONTRACT_FILES.servedSchema}`);
  if (argv.includes('--release')) {
    await writeFile(CONTRACT_FILES.releasedSchema, RELEASED_SCHEMA_HEADER + withoutHeader(await readFile(CONTRACT_FILES.servedSchema, 'utf8')));
    await copyFile(CONTRACT_FILES.openapi, CONTRACT_FILES.releasedOpenapi);
    await writeFile(CONTRACT_FILES.acknowledgements, EMPTY_ACKNOWLEDGEMENTS);
    console.log('copied both contracts to api-contracts/released/ and emptied api-contracts/breaking-changes.yaml');
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
