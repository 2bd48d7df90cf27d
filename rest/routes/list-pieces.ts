import type { BuiltPieces, PieceSource } from '../../src/answer-cache/answer-cache.ts';
import { TurnBudget } from '../../src/answer-cache/pieces.ts';
import type { PieceVersionStore } from '../../src/answer-cache/piece-version-store.ts';
import { executeOperation, type KnownRows, type OperationRuntime } from '../../src/graphql/execute-operation.ts';
import { PUBLIC_BOOKINGS_LENGTH, type CompiledOperations } from '../../src/graphql/operations.ts';
import { bookingsOf, courseRunsOf, toBooking, toCourse } from '../../src/graphql/public-representation.ts';

interface ListRuntime extends OperationRuntime {
  operations: Pick<CompiledOperations, 'coursesOfRuns' | 'bookingsOfIds'>;
  pieceVersions: PieceVersionStore;
}

/** `{"data":[…]}` as listBody writes it (rest/pipeline/answers.ts): items joined by commas. */
const HEAD = '{"data":[';
const TAIL = ']}';

/** Runs read by one build of pieces: about ten sessions each, a few milliseconds of work. */
const RUNS_PER_BUILD = 100;

/** Each item's text, as `JSON.stringify` writes it in the whole body, yielding between items when a turn has had its share. */
async function serialised<T extends { id: string }>(items: readonly T[], toJson: (item: T) => unknown): Promise<BuiltPieces> {
  const pieces = new Map<string, string>();
  const budget = new TurnBudget();
  for (const item of items) {
    pieces.set(item.id, JSON.stringify(toJson(item)));
    if (budget.spent) await budget.pause();
  }
  return { head: HEAD, tail: TAIL, pieces };
}

/** /courses in pieces: one per listed course run, its version the rows it is built from (src/graphql/cache-sources.ts). */
export function coursePieces(runtime: ListRuntime, workspaceId: string, primed: KnownRows): PieceSource {
  return {
    separator: ',',
    batch: RUNS_PER_BUILD,
    list: async (connection, previous) => ({ frame: '', ...(await runtime.pieceVersions.listing('courses', connection, workspaceId, previous)) }),
    async build(db, runIds) {
      const data = await executeOperation({ ...runtime, db }, runtime.operations.coursesOfRuns, { workspaceId, calendar: false, runIds: [...runIds] }, primed);
      return serialised(courseRunsOf(data), toCourse);
    },
  };
}

/** /bookings in pieces: one per listed booking, its version its row and its participant's. */
export function bookingPieces(runtime: ListRuntime, workspaceId: string, withParticipant: boolean, primed: KnownRows): PieceSource {
  return {
    separator: ',',
    batch: PUBLIC_BOOKINGS_LENGTH,
    list: async (connection) => ({ frame: '', pieces: await runtime.pieceVersions.versions('bookings', connection, workspaceId, PUBLIC_BOOKINGS_LENGTH, { withParticipant }) }),
    async build(db, bookingIds) {
      const data = await executeOperation({ ...runtime, db }, runtime.operations.bookingsOfIds, { workspaceId, withParticipant, bookingIds: [...bookingIds] }, primed);
      return serialised(bookingsOf(data), (booking) => toBooking(booking, withParticipant));
    },
  };
}
