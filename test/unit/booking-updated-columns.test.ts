import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fieldDefinition, type ResourceDefinition } from '../../src/model/resource-registry.ts';
import { serviceModel } from '../../src/model/service-model.ts';
import { operationSources } from '../../src/graphql/operations.ts';

const CODE = readFileSync(new URL('../../src/db/code/booking-events.sql', import.meta.url), 'utf8');

/** The columns of `o` that a `…_changed_visibly(o, n)` function of src/db/code/booking-events.sql compares. */
function compared(fn: string): string[] {
  const body = new RegExp(`CREATE OR REPLACE FUNCTION ${fn}\\(o \\w+, n \\w+\\)[\\s\\S]*?\\$\\$([\\s\\S]*?)\\$\\$`).exec(CODE)?.[1];
  expect(body, `${fn} in src/db/code/booking-events.sql`).toBeDefined();
  return [...body!.split('IS DISTINCT FROM')[0]!.matchAll(/\bo\.(\w+)/g)].map((match) => match[1]!).sort();
}

const columnOf = (resource: ResourceDefinition, field: string) => fieldDefinition(resource, field).column;

describe('what a booking.updated event compares', () => {
  const { registry } = serviceModel();
  const booking = registry.get('Booking');
  const participant = registry.get(registry.relation(booking, 'participant').resource);
  const fragment = /fragment PublicBooking on Booking \{([\s\S]*?)\n {2}\}/.exec(operationSources.bookings)![1]!;
  const selected = [...fragment.matchAll(/^\s*(\w+)/gm)].map((match) => match[1]!);

  it('the booking columns booking_changed_visibly compares are those the PublicBooking fragment reads (src/graphql/operations.ts, the catalog)', () => {
    const read = selected.filter((field) => field in booking.fields && field !== booking.key).map((field) => columnOf(booking, field));
    expect(compared('booking_changed_visibly')).toEqual(read.sort());
  });

  it('the participant columns participant_changed_visibly compares are those of the participant the fragment selects', () => {
    expect(selected).toContain('participant');
    const read = Object.keys(participant.fields).filter((field) => field !== participant.key).map((field) => columnOf(participant, field));
    expect(compared('participant_changed_visibly')).toEqual(read.sort());
  });
});
