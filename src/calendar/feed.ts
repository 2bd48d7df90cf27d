import type { BuiltPieces, PieceSource } from '../answer-cache/answer-cache.ts';
import { TurnBudget } from '../answer-cache/pieces.ts';
import { workspaceVersion, type PieceVersionStore } from '../answer-cache/piece-version-store.ts';
import { executeOperation, type OperationRuntime } from '../graphql/execute-operation.ts';
import type { CompiledOperation, CourseRunResult } from '../graphql/operations.ts';
import { calendarFrame, courseEvents, renderCalendar, type CalendarCourse } from './ics.ts';

/** A field the operation selects only with `$calendar`: always present in a calendar's result. */
function selected<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`The calendar operation did not select ${name}`);
  return value;
}

const DEFAULT_NAME = 'Courses';

function calendarCourse(run: CourseRunResult): CalendarCourse {
  return {
    id: run.id,
    title: run.template.title,
    description: run.template.description,
    revision: selected(run.template.revision, 'revision'),
    updatedAt: selected(run.template.updatedAt, 'updatedAt'),
    sessions: run.sessions.map((session) => ({
      id: session.id,
      startsAt: session.startsAt,
      durationMinutes: session.durationMinutes,
      location: session.location,
      revision: selected(session.revision, 'revision'),
      updatedAt: selected(session.updatedAt, 'updatedAt'),
    })),
  };
}

/**
 * The calendar of a workspace: the /courses operation with `$calendar`, so the feed lists exactly
 * the sessions /courses lists (docs/contract-rules.md, `calendar.content`), rendered as RFC 5545
 * in one document (the build of the whole, used with the answer cache off).
 */
export async function buildCalendarFeed(runtime: OperationRuntime, operation: CompiledOperation<'courses'>, workspaceId: string): Promise<string> {
  const data = await executeOperation(runtime, operation, { workspaceId, calendar: true });
  const workspace = data.workspace;
  return renderCalendar(workspace?.name ?? DEFAULT_NAME, (workspace?.courses ?? []).map(calendarCourse));
}

/** How many runs one build of pieces reads: about 10 sessions each, a few milliseconds of work. */
const RUNS_PER_BUILD = 100;

/**
 * The same calendar in pieces, one per course run (its events), for the answer cache: after a
 * change only the runs whose rows changed are read and rendered again (src/answer-cache/pieces.ts);
 * the frame (the calendar's name) follows the workspace row.
 */
export function calendarPieces(runtime: OperationRuntime & { pieceVersions: PieceVersionStore }, operation: CompiledOperation<'coursesOfRuns'>, workspaceId: string): PieceSource {
  return {
    separator: '',
    batch: RUNS_PER_BUILD,
    list: async (connection, previous) => ({ frame: await workspaceVersion(connection, workspaceId), ...(await runtime.pieceVersions.listing('courses', connection, workspaceId, previous)) }),
    async build(db, runIds): Promise<BuiltPieces> {
      const data = await executeOperation({ ...runtime, db }, operation, { workspaceId, calendar: true, runIds: [...runIds] });
      const { head, tail } = calendarFrame(data.workspace?.name ?? DEFAULT_NAME);
      const pieces = new Map<string, string>();
      const budget = new TurnBudget();
      for (const run of data.workspace?.courses ?? []) {
        pieces.set(run.id, courseEvents(calendarCourse(run)));
        if (budget.spent) await budget.pause();
      }
      return { head, tail, pieces };
    },
  };
}
