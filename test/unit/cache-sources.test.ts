import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WATCHED_TABLES_FILE } from '../../schema/generated-files.ts';
import { packagePath } from '../../src/package-root.ts';
import { watchedInFile } from '../../src/sql/data-version-triggers.ts';
import { CacheSourceError, cacheSources, unwatchedReads, watchedTables } from '../../src/graphql/cache-sources.ts';
import { operationSources } from '../../src/graphql/operations.ts';
import { createSchema } from '../../src/graphql/schema.ts';
import { serviceModel } from '../../src/model/service-model.ts';

const model = serviceModel();
const schema = createSchema(model);
const sources = cacheSources(schema, model.registry);

/** The cached `courses` operation with one more selection under its workspace or under each run. */
const plantedCourses = (underWorkspace: string, underRun = '') =>
  operationSources.courses.replace('courses { ...PublicCourseRun }', `${underWorkspace} courses { ...PublicCourseRun ${underRun} }`);

describe('what feeds the answer cache follows from the cached operations', () => {
  it('every table /courses, /bookings and the calendar read is watched, each with the columns read', () => {
    expect(watchedTables(sources)).toEqual(['bookings', 'course_runs', 'course_templates', 'participants', 'sessions', 'workspaces']);
    const courses = sources.get('courses')!.reads.get('courses')!;
    expect([...courses.get('sessions')!]).toEqual(expect.arrayContaining(['starts_at', 'location', 'status', 'course_run_id']));
    expect([...courses.get('workspaces')!]).toContain('name');
  });

  it("a piece's version joins the rows its `one` relations read, a participant only when the answer shows it, and folds the run's sessions", () => {
    const runs = sources.get('courses')!.piece;
    expect(runs).toMatchObject({ table: 'course_runs', list: { present: 'listed_from', order: [{ column: 'listed_from' }, { column: 'id' }] }, folded: ['sessions'] });
    expect(runs.joined.map((join) => join.table)).toEqual(['course_templates']);
    const bookings = sources.get('bookings')!.piece;
    expect(bookings.joined).toEqual([expect.objectContaining({ table: 'participants', optional: true, includedIf: 'withParticipant' })]);
    expect(bookings.list.order).toEqual([{ column: 'created_at', direction: 'desc' }, { column: 'id', direction: 'desc' }]);
  });

  it('the build fails, naming the operation and the table, when a cached operation reads a table the committed triggers do not watch', () => {
    const planted = cacheSources(schema, model.registry, { ...operationSources, courses: plantedCourses('apiKeys { name }') });
    // What `npm run build` holds the operations against (schema/generated-files.ts): the committed triggers.
    const watched = watchedInFile(readFileSync(packagePath(WATCHED_TABLES_FILE), 'utf8'));
    expect([...watched].sort()).toEqual(watchedTables(sources));
    expect(unwatchedReads(sources, watched)).toEqual([]);
    const problems = unwatchedReads(planted, watched);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^the cached operation courses \(src\/graphql\/operations\.ts\) reads api_keys \(.*name.*\), which the answer cache does not watch/);
  });

  it('a list under a piece that no declaration folds into the piece row is refused, naming the operation and the table', () => {
    expect(() => cacheSources(schema, model.registry, { ...operationSources, courses: plantedCourses('', 'bookings { id }') })).toThrow(CacheSourceError);
    expect(() => cacheSources(schema, model.registry, { ...operationSources, courses: plantedCourses('', 'bookings { id }') })).toThrow(
      /the cached operation courses reads bookings, a list \(CourseRun\.bookings\) under each piece of CourseRun that no declaration folds/,
    );
  });
});
