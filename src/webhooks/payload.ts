import { toBooking, type GraphBooking } from '../../rest/resource-mappers.ts';
import { runOperation, type OperationRunner } from '../../rest/run-operation.ts';
import type { CompiledOperation } from '../graphql/operations.ts';

export interface BookingCreatedEvent {
  id: string;
  type: 'booking.created';
  createdAt: string;
  data: { booking: ReturnType<typeof toBooking> };
}

/**
 * decisions (webhooks, payload): `{ id, type, createdAt, data: { booking } }`, the booking in the
 * REST shape, resolved through the same GraphQL schema and loaders as /bookings; `participant` only
 * for endpoints registered with participant data. Null when the booking no longer exists.
 */
export async function buildPayload(
  runner: OperationRunner,
  operation: CompiledOperation,
  event: { id: string; bookingId: string; createdAt: Date },
  withParticipant: boolean,
): Promise<string | null> {
  const data = (await runOperation(runner, operation, { bookingId: event.bookingId, withParticipant })) as { booking: GraphBooking | null };
  if (!data.booking) return null;
  const payload: BookingCreatedEvent = {
    id: event.id,
    type: 'booking.created',
    createdAt: event.createdAt.toISOString(),
    data: { booking: toBooking(data.booking, withParticipant) },
  };
  return JSON.stringify(payload);
}
