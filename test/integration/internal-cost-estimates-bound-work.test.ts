import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { FILTER_OPERATORS, fieldDefinition, type ResourceDefinition } from '../../src/model/resource-registry.ts';
import { serviceModel } from '../../src/model/service-model.ts';
import { cliOn } from '../support/cli.ts';
import { databaseWork, recordStatements, type SentStatement } from '../support/database-work.ts';
import { openTestDatabase } from '../support/databases.ts';
import { postGraphQL, type InternalAnswer } from '../support/internal-graphql.ts';
import { addBookings } from '../support/many-bookings.ts';
import { startTestApi, type TestApi } from '../support/public-api.ts';
import { contractFixture, seedWorkspace, type SeededWorkspace } from '../support/seed.ts';
import { describeOnEachDatabase } from '../support/variants.ts';

/** Runs and bookings enough that a scan no index bounds, or a count, reads far more than a page returns. */
const RUNS = 120;
const BOOKINGS = 24_000;
/** Generated queries per database; the seed is printed so that a failure replays (`FC_SEED=<seed>`). */
const QUERIES = 40;
/**
 * The suite draws the same sample on every run, so that a run of CI fails only for a change (a new
 * seed found, with FC_SEED=<another>, a shape the estimate still misjudges: docs/internal-graphql.md).
 */
const FIXED_SEED = 20_261_129;
const SEED = Number(process.env.FC_SEED ?? FIXED_SEED);
/**
 * How far the work may exceed its estimate: the estimate is the larger (settling refunds) but for
 * the pages a plan visits beyond the model's (an index's own pages).
 */
const OVER = 1.25;

const { registry, enums } = serviceModel();

/** The shapes that read most, fixed: a nested count and filter no index serves, then six times under aliases. */
const NESTED = 'courseRunsConnection(first: 100) { nodes { bookingsConnection(first: 1, filter: { updatedAt: { lt: "2000-01-01T00:00:00Z" } }) { totalCount nodes { id } } } }';
const SIX = Array.from({ length: 6 }, (_, i) => `a${i}: ${i === 0 ? NESTED : NESTED.replace('(first: 100)', `(first: 100, filter: { createdAt: { gte: "2020-01-0${i}T00:00:00Z" } })`)}`).join(' ');
const FIXED = [`{ workspace(id: $id) { ${NESTED} } }`, `{ workspace(id: $id) { ${SIX} } }`];

/** A filter's value for a field of `type` that rows hold, or none do. */
function valueOf(resource: ResourceDefinition, field: string, operator: string): fc.Arbitrary<string> {
  const definition = fieldDefinition(resource, field);
  const one = (() => {
    switch (definition.type) {
      case 'timestamp':
        return fc.constantFrom('"2000-01-01T00:00:00Z"', '"2026-01-05T00:00:00Z"', '"2026-02-01T00:00:00Z"', '"2030-01-01T00:00:00Z"');
      case 'int':
        return fc.integer({ min: -1, max: 200 }).map(String);
      case 'float':
        return fc.constantFrom('0.5', '100.25');
      case 'boolean':
        return fc.boolean().map(String);
      case 'enum':
        return fc.constantFrom(...enums.get(definition.enumType!)!.values.keys());
      default:
        return fc.constantFrom('"none"', '"x"');
    }
  })();
  return operator === 'in' ? fc.array(one, { minLength: 1, maxLength: 3 }).map((values) => `[${values.join(', ')}]`) : one;
}

/** A selection of rows of `resource`, `depth` levels of lists at most below it. */
function selectionOf(resource: ResourceDefinition, depth: number): fc.Arbitrary<string> {
  const scalars = Object.keys(resource.fields);
  const many = Object.entries(resource.relations ?? {}).filter(([, relation]) => relation.kind === 'many');
  const one = Object.entries(resource.relations ?? {}).filter(([, relation]) => relation.kind === 'one');
  const parts: Array<fc.Arbitrary<string>> = [fc.constantFrom(...scalars)];
  if (depth > 0 && many.length > 0) parts.push(fc.constantFrom(...many).chain(([name, relation]) => connectionOf(name, registry.get(relation.resource), depth - 1)));
  if (depth > 0 && one.length > 0) parts.push(fc.constantFrom(...one).chain(([name, relation]) => selectionOf(registry.get(relation.resource), depth - 1).map((inner) => `${name} { ${inner} }`)));
  // Lists and one-relations under aliases of their own: the same field twice with other arguments would conflict.
  return fc.array(fc.oneof(...parts), { minLength: 1, maxLength: 3 }).map((fields) => [...new Set([resource.key, ...fields.map((field, i) => (field.includes('{') ? `n${i}: ${field}` : field))])].join(' '));
}

/** A connection field with a page size, maybe a filter and a count, and its rows' selection. */
function connectionOf(name: string, target: ResourceDefinition, depth: number): fc.Arbitrary<string> {
  const filterable = Object.keys(target.fields).filter((field) => !fieldDefinition(target, field).personal);
  const filter = fc.option(
    fc
      .constantFrom(...filterable)
      .chain((field) => fc.constantFrom(...FILTER_OPERATORS[fieldDefinition(target, field).type]).chain((operator) => valueOf(target, field, operator).map((value) => `${field}: { ${operator}: ${value} }`))),
    { nil: undefined },
  );
  return fc
    // Pages of 100 under pages of 100 pass the size limit of 20,000 fields rarely: nested pages are smaller.
    .record({ size: depth === 2 ? fc.constantFrom(1, 5, 20, 100) : fc.constantFrom(1, 5, 20), last: fc.boolean(), filter, count: fc.boolean(), nodes: selectionOf(target, depth) })
    .map(({ size, last, filter: where, count, nodes }) => `${name}Connection(${last ? 'last' : 'first'}: ${size}${where ? `, filter: { ${where} }` : ''}) { ${count ? 'totalCount ' : ''}nodes { ${nodes} } }`);
}

/** A query of the workspace: one to three of its lists under aliases, each nested up to two lists deeper. */
const lists = Object.entries(registry.get('Workspace').relations ?? {}).filter(([, relation]) => relation.kind === 'many');
const queries = fc
  .array(
    fc.constantFrom(...lists).chain(([name, relation]) => connectionOf(name, registry.get(relation.resource), 2)),
    { minLength: 1, maxLength: 3 },
  )
  .map((parts) => `{ workspace(id: $id) { id ${parts.map((part, i) => `w${i}: ${part}`).join(' ')} } }`);

describeOnEachDatabase('internal GraphQL estimates bound the database work of every query, on %s', (target) => {
  let db: Database;
  let api: TestApi;
  let ws: SeededWorkspace;
  let token: string;

  beforeAll(async () => {
    db = await openTestDatabase(target);
    const fixture = contractFixture('Scans', 0);
    for (let i = 0; i < RUNS; i += 1) {
      fixture.courseRuns.push({ ref: `g${i}`, template: 't1', status: 'published', sessions: [0, 1, 2].map((s) => ({ ref: `g${i}s${s}`, startsAt: new Date(Date.UTC(2026, 3, 1 + s, i % 24)).toISOString(), durationMinutes: 60, timeZone: 'UTC', location: 'Hall', status: 'scheduled' })) });
    }
    ws = await seedWorkspace(db, fixture);
    await addBookings(db, ws.workspaceId, BOOKINGS);
    // No estimate is refused here: what is measured is how near the estimate lies to the work.
    api = await startTestApi(db, { INTERNAL_COST_PER_REQUEST: '10000000' });
    token = (await cliOn(db).json<{ token: string }>('internal-token', 'create', '--name', 'work', '--personal-data', '--cost-per-minute', '1000000000')).token;
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    await db?.close();
  });

  /** The query's estimate and its measured work, or null when it was refused before it ran. */
  const measure = async (query: string) => {
    const sent: SentStatement[] = [];
    let answer: InternalAnswer | undefined;
    await recordStatements(db, sent, async () => {
      answer = await postGraphQL(api.server.internalUrl!, token, { query: `query ($id: ID!) ${query}`, variables: { id: ws.workspaceId } });
    });
    if (answer!.status === 400) return null;
    expect(answer!.body.errors, query).toBeUndefined();
    return { estimate: answer!.cost!.estimate, work: await databaseWork(db, sent) };
  };

  /**
   * The fixed shapes, then `runs` generated queries: each one's work is at most `OVER` times its
   * estimate, and a fixed shape's estimate at most twice its work. Returns the spread of work over
   * estimate.
   */
  const check = async (runs: number, seed: number) => {
    for (const query of FIXED) {
      const { estimate, work } = (await measure(query))!;
      expect(work.points, query).toBeLessThanOrEqual(OVER * estimate);
      expect(estimate, query).toBeLessThanOrEqual(2 * work.points);
    }
    const ratios: number[] = [];
    let worst = '';
    await fc.assert(
      fc.asyncProperty(queries, async (query) => {
        const measured = await measure(query);
        if (!measured) return;
        const ratio = measured.work.points / measured.estimate;
        if (ratio > Math.max(0, ...ratios)) worst = `${query}: ${JSON.stringify(measured)}`;
        ratios.push(ratio);
        expect(measured.work.points, `${query}: ${JSON.stringify(measured)}`).toBeLessThanOrEqual(OVER * measured.estimate);
      }),
      { seed, numRuns: runs, endOnFailure: true },
    );
    expect(ratios.length).toBeGreaterThan(runs / 2);
    ratios.sort((x, y) => x - y);
    return `work/estimate over ${ratios.length} queries: min ${ratios[0]!.toFixed(2)}, median ${ratios[ratios.length >> 1]!.toFixed(2)}, max ${ratios.at(-1)!.toFixed(2)}, by ${worst}`;
  };

  it(`the fixed shapes and ${QUERIES} generated queries: the estimate bounds the work (seed printed)`, async () => {
    console.log(`internal-cost-estimates-bound-work on ${target}, statistics fresh: seed ${SEED} (replay with FC_SEED=${SEED})`);
    console.log(await check(QUERIES, SEED));
  });

  it('with stale statistics (half as many rows again since the last ANALYZE): the estimate still bounds the work', async () => {
    await addBookings(db, ws.workspaceId, BOOKINGS / 2, { analyze: false });
    // Sizes are read at start: a server started now reads the planner's scaled row counts and the old shares.
    await api.close();
    api = await startTestApi(db, { INTERNAL_COST_PER_REQUEST: '10000000' });
    console.log(`internal-cost-estimates-bound-work on ${target}, statistics stale: seed ${SEED + 1} (replay with FC_SEED=${SEED})`);
    console.log(await check(QUERIES / 4, SEED + 1));
  });
});
