import { executeOperation, type OperationRuntime } from '../graphql/execute-operation.ts';
import type { CompiledOperation } from '../graphql/operations.ts';
import { toBooking, type BookingCreatedEvent } from '../graphql/public-representation.ts';

/**
 * docs/contract-rules.md, `webhooks.payload`: `{ id, type, createdAt, data: { booking } }`, the
 * booking in the public shape, resolved through the same GraphQL schema and loaders as /bookings;
 * `participant` only for endpoints registered with participant data. Null when the booking no
 * longer exists.
 */
export async function buildPayload(
  runtime: OperationRuntime,
  operation: CompiledOperation<'webhookBooking'>,
  event: { id: string; bookingId: string; createdAt: Date },
  withParticipant: boolean,
): Promise<string | null> {
  const data = await executeOperation(runtime, operation, { bookingId: event.bookingId, withParticipant });
  if (!data.booking) return null;
  const payload: BookingCreatedEvent = {
    id: event.id,
    type: 'booking.created',
    createdAt: event.createdAt.toISOString(),
    data: { booking: toBooking(data.booking, withParticipant) },
  };
  return JSON.stringify(payload);
}
