/** The booking as a booking.updated event keeps it, before its transaction and at its commit. */
import type { Queryable } from '../db/database.ts';
import type { ResourceRegistry } from '../model/resource-registry.ts';
import { joinedResource } from '../sql/sql-builder.ts';

type Row = Record<string, unknown>;

export interface KeptBooking {
  /** The booking's row, as the loaders read it. */
  booking: Row;
  /** Its participant's row (null: it had none); undefined when it was not kept or has been erased. */
  participant?: Row | null;
}

export interface KeptStates {
  before: KeptBooking;
  after: KeptBooking;
}

export const BOOKING_RESOURCE = 'Booking';
export const PARTICIPANT_RELATION = 'participant';

const cached = new WeakMap<ResourceRegistry, (db: Pick<Queryable, 'query'>, eventId: string) => Promise<KeptStates | null>>();

/**
 * The rows are kept as JSON of the tables' rows and read here back into rows of the tables, with
 * the select lists the loaders use: the fixed GraphQL operation then builds the payload from them
 * exactly as it builds a REST answer from the tables.
 */
function reader(registry: ResourceRegistry) {
  const bookingResource = registry.get(BOOKING_RESOURCE);
  const participantResource = registry.get(registry.relation(bookingResource, PARTICIPANT_RELATION).resource);
  const [booking, participant] = [joinedResource(bookingResource), joinedResource(participantResource)];
  const text = `SELECT ev.with_participant AND ev.participant_erased_at IS NULL AS participant_kept,
         ${booking.columns('bb', 'bb.')}, ${booking.columns('ba', 'ba.')}, ${participant.columns('pb', 'pb.')}, ${participant.columns('pa', 'pa.')}
    FROM webhook_events ev,
         jsonb_populate_record(NULL::${booking.table}, ev.booking_before) bb,
         jsonb_populate_record(NULL::${booking.table}, ev.booking_after) ba,
         jsonb_populate_record(NULL::${participant.table}, ev.participant_before) pb,
         jsonb_populate_record(NULL::${participant.table}, ev.participant_after) pa
   WHERE ev.id = $1 AND ev.booking_before IS NOT NULL AND ev.booking_after IS NOT NULL`;
  const participantOf = (result: Row, prefix: string): Row | null =>
    result[`${prefix}${participantResource.key}`] === null ? null : participant.row(result, prefix);
  return async (db: Pick<Queryable, 'query'>, eventId: string): Promise<KeptStates | null> => {
    const found = await db.query<Row & { participant_kept: boolean }>(text, [eventId]);
    const result = found.rows[0];
    if (!result) return null;
    const kept = (bookingPrefix: string, participantPrefix: string): KeptBooking => ({
      booking: booking.row(result, bookingPrefix),
      ...(result.participant_kept ? { participant: participantOf(result, participantPrefix) } : {}),
    });
    return { before: kept('bb.', 'pb.'), after: kept('ba.', 'pa.') };
  };
}

/** The kept states of a booking.updated event; null for any other event. */
export function readKeptStates(db: Pick<Queryable, 'query'>, registry: ResourceRegistry, eventId: string): Promise<KeptStates | null> {
  let read = cached.get(registry);
  if (!read) {
    read = reader(registry);
    cached.set(registry, read);
  }
  return read(db, eventId);
}
