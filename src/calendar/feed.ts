import { executeOperation, type OperationRuntime } from '../graphql/execute-operation.ts';
import type { CompiledOperation } from '../graphql/operations.ts';
import { renderCalendar } from './ics.ts';

/** A field the operation selects only with `$calendar`: always present in a calendar's result. */
function selected<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new Error(`The calendar operation did not select ${name}`);
  return value;
}

/**
 * The calendar of a workspace: the /courses operation with `$calendar`, so the feed lists exactly
 * the sessions /courses lists (docs/contract-rules.md, `calendar.content`), rendered as RFC 5545.
 */
export async function buildCalendarFeed(runtime: OperationRuntime, operation: CompiledOperation<'courses'>, workspaceId: string): Promise<string> {
  const data = await executeOperation(runtime, operation, { workspaceId, calendar: true });
  const workspace = data.workspace;
  return renderCalendar(
    workspace?.name ?? 'Courses',
    (workspace?.courses ?? []).map((run) => ({
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
    })),
  );
}
