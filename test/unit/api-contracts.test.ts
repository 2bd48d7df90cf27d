import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { CONTRACT_FILES, checkContracts, describeProblems, graphqlBreakingChanges, type ContractFiles } from '../../api-contracts/contracts.ts';

/** A parsed OpenAPI document, edited freely by the planted changes. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Spec = Record<string, any>;

/** The check of `npm test`, on copies of the contracts with one change planted. */
async function checkWith(dir: string, plant: { sdl?: (sdl: string) => string; openapi?: (spec: Spec) => void; acknowledgements?: string }) {
  const files: ContractFiles = {
    ...CONTRACT_FILES,
    servedSchema: join(dir, 'served.graphql'),
    openapi: plant.openapi ? join(dir, 'public-v1.yaml') : CONTRACT_FILES.openapi,
    acknowledgements: join(dir, 'breaking-changes.yaml'),
  };
  const sdl = await readFile(CONTRACT_FILES.servedSchema, 'utf8');
  await writeFile(files.servedSchema, plant.sdl ? plant.sdl(sdl) : sdl);
  if (plant.openapi) {
    const spec = parse(await readFile(CONTRACT_FILES.openapi, 'utf8')) as Spec;
    plant.openapi(spec);
    await writeFile(files.openapi, stringify(spec));
  }
  if (plant.acknowledgements === undefined) await copyFile(CONTRACT_FILES.acknowledgements, files.acknowledgements);
  else {
    // The planted entries beside those the repository already holds for its own changes.
    const committed = (parse(await readFile(CONTRACT_FILES.acknowledgements, 'utf8')) ?? {}) as Record<string, unknown[] | undefined>;
    const planted = (parse(plant.acknowledgements) ?? {}) as Record<string, unknown[] | undefined>;
    const merged = Object.fromEntries(['graphql', 'openapi'].map((contract) => [contract, [...(committed[contract] ?? []), ...(planted[contract] ?? [])]]));
    await writeFile(files.acknowledgements, stringify(merged));
  }
  return describeProblems(await checkContracts(files), files);
}

const removeWorkspaceName = (sdl: string) => {
  const changed = sdl.replace(/(type Workspace \{[^}]*?)\n {2}name: String!/, '$1');
  expect(changed).not.toBe(sdl);
  return changed;
};
const removeCourseDescription = (spec: Spec) => {
  const course = spec.components.schemas.Course;
  delete course.properties.description;
  course.required = course.required.filter((name: string) => name !== 'description');
};

describe('breaking changes against the last release (api-contracts/)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'api-contracts-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the served internal schema and openapi/public-v1.yaml have no breaking change since the last release that api-contracts/breaking-changes.yaml does not acknowledge', async () => {
    const problems = describeProblems(await checkContracts());
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('a field removed from the served SDL fails the check, naming it; acknowledged with a reason, it passes; an acknowledgement no change needs fails', async () => {
    const problems = await checkWith(dir, { sdl: removeWorkspaceName });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/Breaking change to the internal GraphQL schema .*Field 'name' .*removed.*Workspace.*\(FIELD_REMOVED at Workspace\.name\)/);
    const acknowledged = stringify({ graphql: [{ kind: 'FIELD_REMOVED', at: 'Workspace.name', reason: 'Renamed to title; every token reads title since June.' }] });
    expect(await checkWith(dir, { sdl: removeWorkspaceName, acknowledgements: acknowledged })).toEqual([]);
    const stale = await checkWith(dir, { acknowledgements: acknowledged });
    expect(stale).toEqual([expect.stringMatching(/acknowledges FIELD_REMOVED at Workspace\.name \(graphql\), which no longer happens/)]);
    const noReason = stringify({ graphql: [{ kind: 'FIELD_REMOVED', at: 'Workspace.name', reason: ' ' }] });
    await expect(checkWith(dir, { sdl: removeWorkspaceName, acknowledgements: noReason })).rejects.toThrow(/graphql\[\d+\] \(FIELD_REMOVED at Workspace\.name\) needs a "reason"/);
  });

  it('a response property removed from the OpenAPI document fails the check, naming the operation and the property; acknowledged, it passes', async () => {
    const problems = await checkWith(dir, { openapi: removeCourseDescription });
    expect(problems.length).toBeGreaterThanOrEqual(1);
    expect(problems.join('\n')).toMatch(/public OpenAPI contract .*cannot remove response property 'description'.*GET \/api\/public\/v1\/courses response 200/);
    // The entry the check prints, as a reviewer copies it.
    const at = /under openapi: \{ kind: "prevent removing response property", at: "([^"]+)"/.exec(problems[0]!)![1]!;
    expect(at).toBe('GET /api/public/v1/courses response 200 response body: application/json property data/items/description');
    const acknowledged = stringify({ openapi: [{ kind: 'prevent removing response property', at, reason: 'Deprecated in 1.0.0-beta.2, removed in 1.0.0-beta.3.' }] });
    expect(await checkWith(dir, { openapi: removeCourseDescription, acknowledgements: acknowledged })).toEqual([]);
  });

  it('a removed operation and a new required parameter of the public contract are breaking too', async () => {
    const problems = await checkWith(dir, {
      openapi: (spec) => {
        delete spec.paths['/api/public/v1/bookings'];
        const courses = spec.paths['/api/public/v1/courses'].get;
        courses.parameters = [...(courses.parameters ?? []), { name: 'X-Tenant', in: 'header', required: true, schema: { type: 'string' } }];
      },
    });
    expect(problems.join('\n')).toMatch(/cannot remove an operation\. .*\(prevent operation removal at GET \/api\/public\/v1\/bookings\)/);
    expect(problems.join('\n')).toMatch(/cannot add required header parameter X-Tenant .*at GET \/api\/public\/v1\/courses header parameter: X-Tenant/);
  });

  it('each kind of breaking change of the internal schema is found: a removed type, argument or enum value, a changed type, a new required argument', async () => {
    const released = 'type Query { a(x: Int): Thing b: Int } type Thing { id: ID! } enum Status { ON OFF } type Other { s: Status }';
    const cases: Array<[string, string, RegExp]> = [
      ['type Query { a(x: Int): Thing b: Int } type Thing { id: ID! } enum Status { ON OFF }', 'Other', /TYPE_REMOVED/],
      ['type Query { a: Thing b: Int } type Thing { id: ID! } enum Status { ON OFF } type Other { s: Status }', 'Query.a.x', /FIELD_ARGUMENT_REMOVED/],
      ['type Query { a(x: Int): Thing b: Int } type Thing { id: ID! } enum Status { ON } type Other { s: Status }', 'Status.OFF', /ENUM_VALUE_REMOVED/],
      ['type Query { a(x: Int): Thing b: String } type Thing { id: ID! } enum Status { ON OFF } type Other { s: Status }', 'Query.b', /FIELD_TYPE_CHANGED/],
      ['type Query { a(x: Int, y: Int!): Thing b: Int } type Thing { id: ID! } enum Status { ON OFF } type Other { s: Status }', 'Query.a.y', /FIELD_ARGUMENT_ADDED/],
    ];
    for (const [current, at, kind] of cases) {
      const changes = await graphqlBreakingChanges(released, current);
      expect(changes.map((change) => `${change.kind} ${change.at}`), current).toEqual([expect.stringMatching(new RegExp(`${kind.source} ${at.replace('.', '\\.')}`))]);
    }
    // Additions are not breaking.
    expect(await graphqlBreakingChanges(released, `${released} type New { id: ID }`)).toEqual([]);
  });
});
