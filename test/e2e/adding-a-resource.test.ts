import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENERATED } from '../support/planted-mistakes.ts';
import { scratchCopy, shell } from '../support/scratch-copy.ts';
import { ADMIN_ARGUMENTS } from '../support/service-commands.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';

const GUIDE = await readFile(new URL('../../docs/adding-a-resource.md', import.meta.url), 'utf8');
const blocks = (language: string) => [...GUIDE.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((match) => match[1]!);
const TOKEN = 'adding-a-resource-internal-token-0123456789';
const METRICS_TOKEN = 'adding-a-resource-metrics-token-0123456789';

/**
 * docs/adding-a-resource.md, followed to the letter on a scratch copy of the repository (its files,
 * its current build, the installed packages): the page's migration and overlay entry, its
 * commands, its fixture and its queries.
 */
describe('docs/adding-a-resource.md, followed on a scratch copy', () => {
  let scratch: string;
  let dataDir: string;
  let server: ServerProcess | undefined;
  // No webhook worker looking for due deliveries: the statements counted below are the queries' alone.
  const env = () => ({ DATA_DIR: dataDir, INTERNAL_API_TOKEN: TOKEN, METRICS_TOKEN, WEBHOOK_WORKER: 'false' });

  beforeAll(async () => {
    scratch = await scratchCopy('adding-a-resource-');
    dataDir = await mkdtemp(join(tmpdir(), 'adding-a-resource-data-'));
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await rm(scratch, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
  });

  const graphql = async (query: string, variables: Record<string, unknown>, token = TOKEN) => {
    const internal = /Internal GraphQL: (http:\/\/\S+)\/graphql/.exec(server!.output())![1]!;
    const response = await fetch(`${internal}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await response.json()) as { data?: Record<string, unknown>; errors?: Array<{ message: string }> };
  };
  const statements = async () => {
    const internal = /Internal GraphQL: (http:\/\/\S+)\/graphql/.exec(server!.output())![1]!;
    const text = await (await fetch(`${internal}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    return Number(/^db_statements_total (\d+)/m.exec(text)![1]);
  };
  const admin = async (...args: string[]) => {
    const result = await shell(scratch, process.execPath, [...ADMIN_ARGUMENTS, ...args, '--json'], env());
    expect(result.code, result.output).toBe(0);
    return JSON.parse(result.output.trim().split('\n').at(-1)!) as Record<string, unknown>;
  };

  it('a migration and one overlay entry serve venues on internal GraphQL, seeded by the import, each step as the page says', async () => {
    // 1. The migration, where the page names it.
    const [migration] = blocks('sql');
    const migrationFile = /`(src\/db\/migrations\/\d+_venues\.sql)`/.exec(GUIDE)![1]!;
    await writeFile(join(scratch, migrationFile), migration!);

    // The build beside it predates the migration: it refuses to start and says what to run.
    const stale = await startServerProcess(env(), scratch).then(
      async (started) => {
        await started.stop();
        return 'started';
      },
      (error: unknown) => String(error),
    );
    expect(stale).toContain('This build is older than its migrations (src/db/migrations has 1764000000000_venues, which the build\'s catalog does not know)');
    expect(stale).toContain('run npm run generate');

    // 2. The overlay entry, the only other change.
    const [entry] = blocks('ts');
    expect(entry!.trim().split('\n')).toHaveLength(1);
    const overlayFile = join(scratch, 'src/model/overlay.ts');
    const overlay = await readFile(overlayFile, 'utf8');
    await writeFile(overlayFile, overlay.replace(/\n};\n$/, `\n  ${entry!.trim()}\n};\n`));

    // 3. The page's commands, then npm start.
    const commands = blocks('sh')[0]!.split('\n').map((line) => line.replace(/#.*$/, '').trim()).filter(Boolean);
    expect(commands).toEqual(['npm run generate', 'npm run build', 'npm start']);
    for (const command of commands.slice(0, -1)) {
      const result = await shell(scratch, 'npm', command.split(' ').slice(1));
      expect(result.code, `${command}:\n${result.output}`).toBe(0);
    }
    const sdl = await readFile(join(scratch, 'schema/internal.graphql'), 'utf8');
    expect(sdl).toContain('"""A place where sessions take place."""\ntype Venue {');
    expect(sdl).toMatch(/venuesConnection\(first: Int, after: String, last: Int, before: String, filter: VenueFilter\): VenueConnection!/);
    server = await startServerProcess(env(), scratch);

    // 4. The page's fixture, through the CLI.
    const [fixture] = blocks('json');
    await writeFile(join(scratch, 'venues.json'), fixture!);
    const imported = (await admin('import', '--file', 'venues.json')) as { workspaceId: string; ids: Record<string, string> };
    expect(Object.keys(imported.ids).sort()).toEqual(['r1', 's1', 's2', 't1', 'v1', 'v2']);
    // A value a rule refuses, named as the page says; nothing is written.
    const bad = JSON.parse(fixture!) as { workspace: { name: string }; venues: Array<{ name: string }> };
    bad.workspace.name = 'Refused';
    bad.venues[1]!.name = '';
    await writeFile(join(scratch, 'bad.json'), JSON.stringify(bad));
    const refused = await shell(scratch, process.execPath, [...ADMIN_ARGUMENTS, 'import', '--file', 'bad.json'], env());
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain(/`(venues\[1\] \(ref "v2"\): name "" must not be empty)`/.exec(GUIDE)![1]);
    expect(refused.output).toContain('nothing was written');

    // 5. The page's queries.
    const [venues, sessions] = blocks('graphql');
    const found = await graphql(venues!, { id: imported.workspaceId });
    expect(found.errors).toBeUndefined();
    expect(found.data).toEqual({
      workspace: {
        venuesConnection: {
          totalCount: 1,
          nodes: [{ name: 'Main hall', address: 'Market Square 1, Ulm', contactEmail: 'hall@ulm.example', sessionsConnection: { totalCount: 1, nodes: [{ startsAt: '2027-03-01T09:00:00.000Z' }] } }],
        },
      },
    });
    const both = await graphql(sessions!, { id: imported.workspaceId });
    expect(both.data).toEqual({ workspace: { sessionsConnection: { nodes: [{ startsAt: '2027-03-01T09:00:00.000Z', venue: { name: 'Main hall' } }, { startsAt: '2027-03-08T09:00:00.000Z', venue: { name: 'Garden' } }] } } });

    // Every session's venue in one statement: 5 sessions and 50 cost the same.
    const sized = async (count: number) => {
      await writeFile(
        join(scratch, `sized-${count}.json`),
        JSON.stringify({
          workspace: { name: `Sized ${count}` },
          venues: [0, 1, 2].map((v) => ({ ref: `v${v}`, name: `Venue ${v}` })),
          courseTemplates: [{ ref: 't', title: 'Course' }],
          courseRuns: [{ ref: 'r', template: 't', status: 'published', sessions: Array.from({ length: count }, (_, s) => ({ ref: `s${s}`, startsAt: new Date(Date.UTC(2027, 0, 1, 0, s)).toISOString(), durationMinutes: 30, timeZone: 'UTC', status: 'scheduled', venue: `v${s % 3}` })) }],
        }),
      );
      const seeded = (await admin('import', '--file', `sized-${count}.json`)) as { workspaceId: string; ids: Record<string, string> };
      const before = await statements();
      const answer = await graphql(sessions!, { id: seeded.workspaceId });
      expect((answer.data as { workspace: { sessionsConnection: { nodes: Array<{ venue: { name: string } }> } } }).workspace.sessionsConnection.nodes).toHaveLength(count);
      return { ...seeded, statements: (await statements()) - before };
    };
    const few = await sized(5);
    const many = await sized(50);
    expect(few.statements).toBeGreaterThan(0);
    expect(many.statements).toBe(few.statements);

    // A token restricted to the first workspace reads its venues and no other workspace's.
    const restricted = (await admin('internal-token', 'create', '--name', 'venues-only', '--workspaces', imported.workspaceId)) as { token: string };
    const own = await graphql('query($id: ID!) { venue(id: $id) { name } }', { id: imported.ids.v1 }, restricted.token);
    expect(own.data).toEqual({ venue: { name: 'Main hall' } });
    const other = await graphql('query($venue: ID!, $workspace: ID!) { venue(id: $venue) { name } workspace(id: $workspace) { id } }', { venue: many.ids.v0, workspace: many.workspaceId }, restricted.token);
    expect(other.data).toEqual({ venue: null, workspace: null });
    const unrestricted = await graphql('query($venue: ID!) { venue(id: $venue) { name } }', { venue: many.ids.v0 });
    expect(unrestricted.data).toEqual({ venue: { name: 'Venue 0' } });

    // The personal column, as the page says: refused to a token without the grant, the rest of the query answered without it.
    const personal = await graphql(venues!, { id: imported.workspaceId }, restricted.token);
    expect(personal.errors?.[0]).toMatchObject({ extensions: { code: 'PERSONAL_DATA_NOT_GRANTED' } });
    expect(personal.errors?.[0]?.message).toContain('Venue.contactEmail');
    const impersonal = await graphql(venues!.replace(' contactEmail', ''), { id: imported.workspaceId }, restricted.token);
    expect(impersonal.errors).toBeUndefined();

    // 6. The suite, unchanged: npm test's own steps (package.json), but for the build, which step 3
    // ran on this very tree, with its vitest run kept to the unit project (the integration project
    // is the one running this test), and its lint kept to the files the page's steps wrote: the lint
    // configuration reads no types, so a file's verdict is its own, and the others' is this run's.
    await server.stop();
    server = undefined;
    const [suite] = blocks('sh').filter((block) => block.trim() === 'npm test');
    expect(suite).toBeDefined();
    const { scripts } = JSON.parse(await readFile(join(scratch, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const steps = scripts.test!.split(' && ');
    expect(steps).toContain('npm run build');
    expect(steps.at(-1)).toBe('vitest run');
    const written = [overlayFile, ...GENERATED.map((file) => join(scratch, file))].filter((file) => /\.[cm]?[jt]s$/.test(file));
    const lintWritten = `eslint ${written.map((file) => relative(scratch, file)).join(' ')}`;
    const unitSuite = steps
      .filter((step) => step !== 'npm run build')
      .map((step) => (step === 'vitest run' ? 'vitest run --project unit' : step === 'npm run lint' ? lintWritten : step));
    const tested = await shell(scratch, 'bash', ['-xc', `PATH="$PWD/node_modules/.bin:$PATH" && ${unitSuite.join(' && ')}`]);
    expect(tested.code, tested.output.slice(-6000)).toBe(0);
    expect(steps).toContain('npm run lint');
    for (const step of [lintWritten, 'depcruise src rest bench', 'tsc --noEmit', 'redocly lint']) expect(tested.output).toContain(step);
    // eslint-disable-next-line no-control-regex
    expect(tested.output.replace(/\u001b\[[0-9;]*m/g, '')).toMatch(/Test Files +\d+ passed \(\d+\)/);
  }, 600_000);
});
