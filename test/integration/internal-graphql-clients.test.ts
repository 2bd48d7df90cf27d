import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { cliOn } from '../support/cli.ts';
import { type TestApi } from '../support/public-api.ts';
import { sharedTestApi } from '../support/shared-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const MARKDOWN = await readFile(join(ROOT, 'docs/internal-graphql.md'), 'utf8');
const run = promisify(execFile);

/** The code block of the page whose first line is `first` (a file's name in a comment), or the first of `language` holding `text`. */
function block(language: string, holding: string): string {
  const found = [...MARKDOWN.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]!).find((text) => text.includes(holding));
  if (!found) throw new Error(`docs/internal-graphql.md has no ${language} block holding ${holding}`);
  return found;
}

/** What a client run printed: the data it read, or the error it threw as the client shows it. */
interface ClientOutcome {
  data?: { workspace: Record<string, unknown> };
  error?: { name: string; message: string; codes: unknown[]; messages: string[] };
}

/** The runner of one client function in a process of its own, as a team's service would run it. */
const RUNNER = `
import * as client from './client.mjs';
try {
  const result = await client[process.argv[2]](process.argv[3]);
  console.log(JSON.stringify({ data: result.data ?? result }));
} catch (error) {
  const errors = error.errors ?? error.response?.errors ?? [];
  console.log(JSON.stringify({ error: { name: error.constructor.name, message: error.message, codes: errors.map((e) => e.extensions?.code), messages: errors.map((e) => e.message) } }));
}
`;

/**
 * A team's project for each client, laid out as the page says: its sources, its generator's
 * configuration, the generated manifest, and the client bundled (esbuild) to run under Node.
 */
interface Project {
  dir: string;
  manifest: string;
  run(fn: string, workspaceId: string, url: string, token: string): Promise<ClientOutcome>;
}

async function project(name: 'apollo' | 'codegen'): Promise<Project> {
  const dir = await mkdtemp(join(tmpdir(), `internal-client-${name}-`));
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  await mkdir(join(dir, 'src'));
  await writeFile(join(dir, 'src/queries.ts'), block('ts', name === 'apollo' ? '@apollo/client\';\n\nexport const WORKSPACE_RUNS' : "from './gql/index.ts'"));
  await writeFile(join(dir, 'src/client.ts'), block('ts', name === 'apollo' ? 'generatePersistedQueryIdsFromManifest' : "from 'graphql-request'"));
  let manifest: string;
  if (name === 'apollo') {
    await writeFile(join(dir, 'persisted-query-manifest.config.json'), block('json', '"output": "persisted-query-manifest.json"'));
    await run('npx', ['--no-install', 'generate-persisted-query-manifest'], { cwd: dir });
    manifest = join(dir, 'persisted-query-manifest.json');
  } else {
    await mkdir(join(dir, 'schema'));
    await copyFile(join(ROOT, 'schema/internal.graphql'), join(dir, 'schema/internal.graphql'));
    await writeFile(join(dir, 'codegen.ts'), block('ts', 'CodegenConfig'));
    await run('npx', ['--no-install', 'graphql-codegen', '--config', 'codegen.ts'], { cwd: dir });
    manifest = join(dir, 'src/gql/persisted-documents.json');
  }
  await build({ entryPoints: [join(dir, 'src/client.ts')], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: join(dir, 'client.mjs'), logLevel: 'silent' });
  await writeFile(join(dir, 'run.mjs'), RUNNER);
  return {
    dir,
    manifest,
    async run(fn, workspaceId, url, token) {
      const { stdout } = await run(process.execPath, ['run.mjs', fn, workspaceId], {
        cwd: dir,
        env: { PATH: process.env.PATH, INTERNAL_GRAPHQL_URL: `${url}/graphql`, INTERNAL_TOKEN: token, NODE_NO_WARNINGS: '1' },
      });
      return JSON.parse(stdout) as ClientOutcome;
    },
  };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
let apollo: Project;
let codegen: Project;

// The generators run once; each database registers their manifests for tokens of its own.
beforeAll(async () => {
  [apollo, codegen] = await Promise.all([project('apollo'), project('codegen')]);
});
afterAll(async () => {
  for (const made of [apollo, codegen]) if (made) await rm(made.dir, { recursive: true, force: true });
});

describeOnEachDatabase('Apollo Client 4 and graphql-request against trusted tokens, as docs/internal-graphql.md sets them up, on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  const token = async (name: string, manifest?: string) => {
    const { token: created } = await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', name, '--documents', 'trusted');
    if (manifest) {
      const added = await cliOn(db).run('internal-token', 'documents', 'add', '--name', name, '--file', manifest);
      expect(added.code, added.stderr).toBe(0);
    }
    return created;
  };

  beforeAll(async () => {
    ({ db, api } = await sharedTestApi(target));
    ws = await seedWorkspace(db, contractFixture('Clients', 12));
  });

  it('Apollo Client 4 with its persisted query link runs the documents of its manifest (generate-persisted-query-manifest), registered with the documented command', async () => {
    const outcome = await apollo.run('workspaceRuns', ws.workspaceId, api.server.internalUrl!, await token('dashboard', apollo.manifest));
    expect(outcome.error).toBeUndefined();
    expect(outcome.data?.workspace).toMatchObject({ name: 'Clients', courseRunsConnection: { nodes: expect.arrayContaining([expect.objectContaining({ id: expect.any(String) })]) } });
  });

  it('graphql-request runs the documents of GraphQL Code Generator’s persisted-documents.json, registered with the documented command', async () => {
    const outcome = await codegen.run('workspaceBookings', ws.workspaceId, api.server.internalUrl!, await token('reporting', codegen.manifest));
    expect(outcome.error).toBeUndefined();
    expect((outcome.data?.workspace as { bookingsConnection: { nodes: unknown[] } }).bookingsConnection.nodes).toHaveLength(10);
  });

  it('a document its token has not registered: each client reads the code, and the message names the hash and how that client’s documents are registered', async () => {
    const apolloId = (JSON.parse(await readFile(apollo.manifest, 'utf8')) as { operations: Array<{ id: string }> }).operations[0]!.id;
    const refusedApollo = await apollo.run('workspaceRuns', ws.workspaceId, api.server.internalUrl!, await token('dashboard-empty'));
    expect(refusedApollo.error).toMatchObject({ name: 'CombinedGraphQLErrors', codes: [expect.stringMatching(/^(DOCUMENT_NOT_TRUSTED|PERSISTED_QUERY_NOT_FOUND)$/)] });
    expect(refusedApollo.error!.messages[0]).toContain(`sha256:${apolloId}`);
    expect(refusedApollo.error!.messages[0]).toContain('generate-persisted-query-manifest');
    expect(refusedApollo.error!.messages[0]).toContain('--name dashboard-empty --file persisted-query-manifest.json');

    const registered = Object.values(JSON.parse(await readFile(codegen.manifest, 'utf8')) as Record<string, string>)[0]!;
    const refusedRequest = await codegen.run('workspaceBookings', ws.workspaceId, api.server.internalUrl!, await token('reporting-empty'));
    expect(refusedRequest.error).toMatchObject({ name: 'ClientError', codes: ['DOCUMENT_NOT_TRUSTED'] });
    expect(refusedRequest.error!.messages[0]).toContain(`sha256:${sha256(registered)}`);
    expect(refusedRequest.error!.messages[0]).toContain('--name reporting-empty --file src/gql/persisted-documents.json');
  });

  it('a refused token: both clients read invalid_api_key from the answer, sent as application/graphql-response+json', async () => {
    const wrong = 'svc_int_0000000000000000000000000000000000000000';
    const [byApollo, byRequest] = await Promise.all([apollo.run('workspaceRuns', ws.workspaceId, api.server.internalUrl!, wrong), codegen.run('workspaceBookings', ws.workspaceId, api.server.internalUrl!, wrong)]);
    expect(byApollo.error).toMatchObject({ name: 'CombinedGraphQLErrors', codes: ['invalid_api_key'] });
    expect(byRequest.error).toMatchObject({ name: 'ClientError', codes: ['invalid_api_key'] });
  });
});
