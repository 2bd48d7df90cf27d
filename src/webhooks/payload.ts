import type { components } from '../contract/public-v1-types.ts';
import { newId } from '../db/ids.ts';
import { executeOperation, executeOperationEach, type OperationRuntime } from '../graphql/execute-operation.ts';
import { withOneRelations } from '../graphql/known-rows.ts';
import type { CompiledOperation } from '../graphql/operations.ts';
import { toBooking, type Booking, type BookingCreatedEvent } from '../graphql/public-representation.ts';
import { BOOKING_RESOURCE, PARTICIPANT_RELATION, type KeptBooking, type KeptStates } from './event-state-store.ts';
import type { EventType } from './event-types.ts';

type BookingUpdatedEvent = components['schemas']['BookingUpdatedEvent'];
type BookingPrevious = components['schemas']['BookingPrevious'];

export interface EventRef {
  id: string;
  bookingId: string;
  createdAt: Date;
}

/**
 * docs/contract-rules.md, `webhooks.payload`: `{ id, type, createdAt, data: { booking } }`, the
 * booking in the public shape, resolved through the same GraphQL schema and loaders as /bookings;
 * `participant` only for endpoints registered with participant data. Null when the booking no
 * longer exists.
 */
export async function buildPayload(
  runtime: OperationRuntime,
  operation: CompiledOperation<'webhookBooking'>,
  event: EventRef,
  withParticipant: boolean,
): Promise<string | null> {
  const booking = await publicBooking(runtime, operation, event.bookingId, withParticipant);
  if (!booking) return null;
  const payload: BookingCreatedEvent = { id: event.id, type: 'booking.created', createdAt: event.createdAt.toISOString(), data: { booking } };
  return JSON.stringify(payload);
}

/**
 * The bodies of many `booking.created` events for endpoints alike in participant data, their
 * bookings read together (null for an event whose booking no longer exists, the error of one that failed).
 */
export async function buildPayloads(
  runtime: OperationRuntime,
  operation: CompiledOperation<'webhookBooking'>,
  events: readonly EventRef[],
  withParticipant: boolean,
): Promise<Array<string | null | Error>> {
  const results = await executeOperationEach(runtime, operation, events.map((event) => ({ bookingId: event.bookingId, withParticipant })));
  return results.map((result, i) => {
    if (result instanceof Error) return result;
    if (!result.booking) return null;
    const event = events[i]!;
    const payload: BookingCreatedEvent = { id: event.id, type: 'booking.created', createdAt: event.createdAt.toISOString(), data: { booking: toBooking(result.booking, withParticipant) } };
    return JSON.stringify(payload);
  });
}

/**
 * The booking as it was at the commit of the transaction that changed it, and in `previous` the
 * fields that differ from before it, each with its value then (`participant: null`: it had none)
 * (docs/contract-rules.md, webhooks.updated). Both are built by the same operation from the rows
 * the event kept, read as the loaders read the tables; what an endpoint without participant data
 * sees holds no participant, before or after.
 */
export async function buildUpdatedPayload(
  runtime: OperationRuntime,
  operation: CompiledOperation<'webhookBooking'>,
  event: EventRef,
  states: KeptStates,
  withParticipant: boolean,
): Promise<string | null> {
  const before = await publicBooking(runtime, operation, event.bookingId, withParticipant, states.before);
  const booking = await publicBooking(runtime, operation, event.bookingId, withParticipant, states.after);
  if (!before || !booking) return null;
  const payload: BookingUpdatedEvent = {
    id: event.id,
    type: 'booking.updated',
    createdAt: event.createdAt.toISOString(),
    data: { booking, previous: previousOf(before, booking) },
  };
  return JSON.stringify(payload);
}

/** The booking as the fixed operation answers it: from the tables, or from rows kept earlier. */
async function publicBooking(
  runtime: OperationRuntime,
  operation: CompiledOperation<'webhookBooking'>,
  bookingId: string,
  withParticipant: boolean,
  kept?: KeptBooking,
): Promise<Booking | null> {
  const known = kept ? { [BOOKING_RESOURCE]: kept.participant === undefined ? kept.booking : withOneRelations(kept.booking, { [PARTICIPANT_RELATION]: kept.participant }) } : {};
  const data = await executeOperation(runtime, operation, { bookingId, withParticipant }, known);
  return data.booking ? toBooking(data.booking, withParticipant) : null;
}

/** Every field whose public value changed, with its value before; an absent one before is null. */
function previousOf(before: Booking, after: Booking): BookingPrevious {
  const previous: Record<string, unknown> = {};
  const [was, is] = [before as Record<string, unknown>, after as Record<string, unknown>];
  for (const field of new Set([...Object.keys(was), ...Object.keys(is)])) {
    if (JSON.stringify(was[field]) !== JSON.stringify(is[field])) previous[field] = was[field] ?? null;
  }
  return previous as BookingPrevious;
}

/**
 * The body of a test event (`webhook test`): an event of the given type with `"test": true` and an
 * example booking whose ids start with `bkg_test_` and `run_test_`, the participant an example too
 * (for endpoints with participant data), in the documented shape.
 */
export function testEventPayload(type: EventType, eventId: string, withParticipant: boolean, at: Date): string {
  const updatedAt = at.toISOString();
  const createdAt = type === 'booking.created' ? updatedAt : new Date(at.getTime() - 3_600_000).toISOString();
  const booking: Booking = { id: newId('bkg_test'), courseRunId: newId('run_test'), source: 'widget', status: 'confirmed', createdAt, updatedAt };
  if (withParticipant) booking.participant = { name: 'Test Participant', email: 'test.participant@example.com' };
  const payload: BookingCreatedEvent | BookingUpdatedEvent =
    type === 'booking.created'
      ? { id: eventId, type, createdAt: updatedAt, test: true, data: { booking } }
      : { id: eventId, type, createdAt: updatedAt, test: true, data: { booking, previous: { status: 'pending', updatedAt: createdAt } } };
  return JSON.stringify(payload);
}
