import { describe, expect, it } from 'vitest';
import type { Catalog } from '../../src/model/catalog.ts';
import { brokenOperations } from '../../src/graphql/operation-problems.ts';
import { frozenCatalog, frozenOverlay } from '../support/frozen-model.ts';

/** The frozen catalog after a migration `change` made to it. */
function migrated(change: (catalog: Catalog) => void): Catalog {
  const copy = structuredClone(frozenCatalog);
  copy.migrations.push('1764000000000_change');
  change(copy);
  return copy;
}

const renamed = (table: string, from: string, to: string) =>
  migrated((catalog) => {
    for (const column of catalog.tables[table]!.columns) if (column.name === from) column.name = to;
  });

describe('brokenOperations: what a migration does to the fixed operations of the public API', () => {
  it('is empty for a migration that leaves what they read', () => {
    expect(brokenOperations(frozenCatalog, migrated(() => undefined), frozenOverlay, ['1764000000000_change'])).toEqual([]);
  });

  it('names the migration, the operation, the field, the contract field it fills and the rename that keeps it', () => {
    const [message, ...rest] = brokenOperations(frozenCatalog, renamed('sessions', 'location', 'venue_location'), frozenOverlay, ['1764000000000_change']);
    // The same runs restricted to some ids, which the answer cache builds again after a change, read it too.
    expect(rest.map((other) => /the fixed operation (\w+)/.exec(other)![1])).toEqual(['coursesOfRuns']);
    expect(message).toContain('src/db/migrations/1764000000000_change.sql breaks the public API: the fixed operation courses (src/graphql/operations.ts) selects Session.location, the column sessions.location');
    expect(message).toContain('It fills Course.sessions[].location of the public contract (openapi/public-v1.yaml).');
    expect(message).toContain("sessions: { order: ['starts_at'], rename: { venue_location: 'location' } }");
    expect(message).toContain('or change the contract: openapi/public-v1.yaml first');
  });

  it('names every operation a column is read by, with the contract fields of each (a booking: /bookings and the webhook)', () => {
    const messages = brokenOperations(frozenCatalog, renamed('participants', 'email', 'email_address'), frozenOverlay, ['1764000000000_change']);
    expect(messages.map((message) => /the fixed operation (\w+)/.exec(message)![1])).toEqual(['bookings', 'bookingsOfIds', 'webhookBooking']);
    for (const message of messages) expect(message).toContain('It fills Booking.participant.email of the public contract');
  });

  it('a column the overlay hides names the overlay as the cause, and the entry that serves it again', () => {
    const [message] = brokenOperations(frozenCatalog, frozenCatalog, { ...frozenOverlay, course_templates: { order: ['title'], hide: ['description'] } }, []);
    expect(message).toContain(
      'src/model/overlay.ts breaks the public API: the fixed operation courses (src/graphql/operations.ts) selects CourseTemplate.description, the column course_templates.description, which src/model/overlay.ts hides. It fills Course.description of the public contract',
    );
    expect(message).toContain("serve it again: course_templates: { order: ['title'] }, then run npm run generate");
  });
});
